import DBus
import Glibc
import TestSupport
import XCTest
@testable import CallMonitor
import Loop

/// ModemManager's `Call.DtmfReceived` (docs/modem-stacks.md §14): what the far end presses on an
/// answered call reaches the monitor's `onTones` under the call's id, DTMF keys only, bounded,
/// paced per call, and only from the daemon itself about a call it follows.
final class HeardTonesTests: MonitorTestCase {
    private let callInterface = "org.freedesktop.ModemManager1.Call"
    private var heard: [HeardTones] = []

    private var allTones: String { heard.map(\.tones).joined() }
    private var allDropped: Int { heard.map(\.dropped).reduce(0, +) }

    /// A call rung on the mock, answered, and the monitor listening for tones.
    private func answeredCall() throws -> (path: String, id: String) {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        monitor.onTones = { [unowned self] tones, _ in self.heard.append(tones) }
        let call = try mockPath(.modemManager, "Ring", ObjectPath("/org/freedesktop/ModemManager1/Modem/0"), "+15551234")
        try callMethod(.modemManager, call, callInterface, "Accept")
        expect(["A new -> incoming.ringing incoming '+15551234'", "busy A",
                "A incoming -> connected.active incoming '+15551234' reason=accepted"])
        return (call, try XCTUnwrap(self.call("A")).id)
    }

    private func hear(_ call: String, _ dtmf: String, times: UInt32 = 1) throws {
        try mock(.modemManager, "HearTones", try ObjectPath(call), dtmf, times)
    }

    func testTonesOfAnAnsweredCallReachTheMonitorUnderItsID() throws {
        let (call, id) = try answeredCall()
        try hear(call, "1")
        try hear(call, "#")
        // Quectel's +QTONEDET gives the tone's ASCII code, and ModemManager passes it on as it is.
        try hear(call, "57")
        waitFor("three tones") { allTones.count == 3 }
        XCTAssertEqual(allTones, "1#9")
        XCTAssertEqual(allDropped, 0)
        XCTAssertEqual(Set(heard.map(\.call.id)), [id])
        XCTAssertEqual(heard.first?.call.state, .connected)
        XCTAssertEqual(heard.first?.call.number, "+15551234")
        expectNothingMore()
        XCTAssertEqual(malformedNotices, [])
    }

    func testHostileTonesAreFilteredBoundedAndCounted() throws {
        let (call, _) = try answeredCall()
        try hear(call, "1;rm -rf /")
        waitFor("the tone of a command") { !heard.isEmpty }
        XCTAssertEqual(heard.map(\.tones), ["1"])
        XCTAssertEqual(heard.map(\.dropped), [9])

        heard = []
        try hear(call, "\u{1B}]0;owned\u{07}\n\r\t*")
        waitFor("the tone among control characters") { !heard.isEmpty }
        // "0" is a tone, whatever surrounds it; a lowercase "d" is no modem's: only tones stay.
        XCTAssertEqual(heard.map(\.tones), ["0*"])
        XCTAssertEqual(heard.map(\.dropped), [12])

        heard = []
        try hear(call, String(repeating: "7", count: 10_000))
        waitFor("ten thousand tones in one signal") { !heard.isEmpty }
        XCTAssertEqual(heard.map(\.tones), [String(repeating: "7", count: HeardTones.limit)])
        XCTAssertEqual(heard.map(\.dropped), [10_000 - HeardTones.limit])

        // Nothing that is a tone: said (rate-limited, as every malformed signal), never an event.
        heard = []
        try hear(call, "xyz;\u{1B}")
        waitForNotice("the signal without a tone") {
            if case .malformed(.modemManager, let what) = $0 { return what.contains("DtmfReceived without a tone (5 characters)") }
            return false
        }
        settle()
        loop.run(until: { false }, timeout: ToneGate.spacing * 2)
        XCTAssertEqual(heard, [])
    }

    func testAFloodOfSignalsBecomesFewBoundedEvents() throws {
        let (call, _) = try answeredCall()
        let started = monotonicNow()
        try hear(call, "5", times: 1_000)
        waitFor("every tone of the flood told, kept or dropped") { allTones.count + allDropped == 1_000 }
        let elapsed = monotonicNow() - started
        XCTAssertTrue(heard.allSatisfy { $0.tones.count <= HeardTones.limit }, "\(heard.map(\.tones.count))")
        XCTAssertTrue(allTones.allSatisfy { $0 == "5" })
        // One event a turn, then one per spacing: a flood cannot make an event per signal.
        XCTAssertLessThanOrEqual(heard.count, Int(elapsed / ToneGate.spacing) + 2,
                                 "\(heard.count) events in \(elapsed) s")
        XCTAssertLessThan(heard.count, 100)
        XCTAssertGreaterThan(allDropped, 0, "1,000 tones in one burst cannot all be kept")
        // Every tone told: nothing waits, and no timer is left to wake the process.
        XCTAssertFalse(monitor.tonesTimerArmed)
    }

    func testTonesHeldByACallThatEndsAreToldBeforeItsEnd() throws {
        let (call, _) = try answeredCall()
        try hear(call, "1")
        waitFor("the first tone") { !heard.isEmpty }
        // Within the spacing: held, then told as the call ends, before its end.
        var eventsSeenBeforeTones: [Int] = []
        monitor.onTones = { [unowned self] tones, _ in
            self.heard.append(tones)
            eventsSeenBeforeTones.append(self.events.count)
        }
        let eventsBefore = events.count
        try hear(call, "2")
        try mock(.modemManager, "RemoteHangup", try ObjectPath(call))
        expect(["A connected -> disconnected incoming '+15551234' reason=terminated", "idle A"])
        XCTAssertEqual(allTones, "12")
        XCTAssertEqual(eventsSeenBeforeTones, [eventsBefore])
        // The hang-up was handled after the held tone was told: nothing waits any more.
        loop.run(until: { false }, timeout: ToneGate.spacing * 2)
        XCTAssertEqual(allTones, "12")
    }

    func testTonesFromAnotherSenderOrOnAPathNoCallHoldsAreIgnored() throws {
        let (call, _) = try answeredCall()
        // Not the owner: the bus does not even deliver it (the match rule names the sender)...
        try run(["gdbus", "emit", "--system", "--object-path", call, "--signal", callInterface + ".DtmfReceived", "'1'"])
        // ...and where it does (another subscription of ours matches), the owner check refuses it.
        openTheDoorToSpoofs(interface: callInterface)
        try run(["gdbus", "emit", "--system", "--object-path", call, "--signal", callInterface + ".DtmfReceived", "'2'"])
        waitForNotice("the rejected signal") {
            if case .rejectedSignal(.modemManager, _, "DtmfReceived") = $0 { return true }
            return false
        }
        // The owner itself, on a path no followed call holds.
        try hear("/org/freedesktop/ModemManager1/Call/99", "3")
        try hear("/org/freedesktop/ModemManager1/Modem/0", "4")
        settle()
        loop.run(until: { false }, timeout: ToneGate.spacing * 2)
        XCTAssertEqual(heard, [])
        // The call's own tones still come through.
        try hear(call, "5")
        waitFor("the call's own tone") { !heard.isEmpty }
        XCTAssertEqual(allTones, "5")
        expectNothingMore()
    }

    /// What each plugin passes on (docs/modem-stacks.md §14): one tone, or Quectel's ASCII code.
    func testEachPluginsFormIsReadAsItsTone() {
        for tone in "0123456789*#ABCD" {
            XCTAssertEqual(ModemManagerTones.decode(String(tone)).tones, String(tone))
            XCTAssertEqual(ModemManagerTones.decode(String(tone.asciiValue!)).tones, String(tone), "Quectel's code of \(tone)")
        }
        // Digits that are no tone's code are tones themselves.
        XCTAssertEqual(ModemManagerTones.decode("10").tones, "10")
        XCTAssertEqual(ModemManagerTones.decode("100").tones, "100")
        XCTAssertEqual(ModemManagerTones.decode("4953").tones, "4953")
        XCTAssertEqual(ModemManagerTones.decode("abcd").tones, "")
        XCTAssertEqual(ModemManagerTones.decode("abcd").dropped, 4)
        XCTAssertEqual(ModemManagerTones.decode("1\u{0}2").tones, "12")
    }
}
