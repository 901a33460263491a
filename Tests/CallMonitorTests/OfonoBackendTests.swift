import DBus
import Glibc
import TestSupport
import XCTest
@testable import CallMonitor

/// The oFono backend against the project's fake oFono on a private bus.
final class OfonoBackendTests: MonitorTestCase {
    let modem = "/phonesim"
    let callInterface = "org.ofono.VoiceCall"
    let managerInterface = "org.ofono.VoiceCallManager"

    private func ring(_ number: String, on modem: String? = nil) throws -> String {
        try mockPath(.ofono, "Ring", try ObjectPath(modem ?? self.modem), number)
    }

    private func setState(_ call: String, _ state: String) throws {
        try mock(.ofono, "SetState", try ObjectPath(call), state)
    }

    private func remoteHangup(_ call: String, _ reason: String) throws {
        try mock(.ofono, "RemoteHangup", try ObjectPath(call), reason)
    }

    private func startAndRing(_ number: String) throws -> String {
        try startMock(.ofono)
        try startMonitor(.ofono)
        let call = try ring(number)
        expect(["A new -> incoming.ringing incoming '\(number)'", "busy A"])
        return call
    }

    func testIncomingAnsweredThenRemoteHangup() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        XCTAssertEqual(notices.last, .synced(.ofono, modems: 1, calls: 0))
        let call = try ring("+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234'", "busy A"])
        XCTAssertEqual(self.call("A")?.modem.eventValue, modem)
        XCTAssertEqual(self.call("A")?.key, CallKey(backend: .ofono, path: call))

        try callMethod(.ofono, call, callInterface, "Answer")
        expect(["A incoming -> connected.active incoming '+15551234'"])

        try remoteHangup(call, "remote")
        expect(["A connected -> disconnected incoming '+15551234' reason=remote", "idle A"])
        XCTAssertEqual(monitor.liveCalls, [])
        // CallAdded; PropertyChanged State + StartTime; DisconnectReason, PropertyChanged State, CallRemoved.
        XCTAssertEqual(monitor.decodedSignals, 6)
        XCTAssertEqual(malformedNotices, [])
    }

    func testIncomingMissed() throws {
        let call = try startAndRing("+15551234")
        try remoteHangup(call, "remote")
        expect(["A incoming -> disconnected incoming '+15551234' reason=remote", "A missed", "idle A"])
    }

    func testIncomingRejectedWhileRinging() throws {
        let call = try startAndRing("+15551234")
        try callMethod(.ofono, call, callInterface, "Hangup")
        expect(["A incoming -> disconnected incoming '+15551234' reason=local", "A missed", "idle A"])
    }

    func testOutgoingDialingAlertingConnectedThenLocalHangup() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        let call = try callMethod(.ofono, modem, managerInterface, "Dial", "+15557654", "")
            .decode(ObjectPath.self).rawValue
        expect(["A new -> dialing.dialing outgoing '+15557654'", "busy A"])
        try setState(call, "alerting")
        expect(["A dialing -> dialing.alerting outgoing '+15557654'"])
        try setState(call, "active")
        expect(["A dialing -> connected.active outgoing '+15557654'"])
        try callMethod(.ofono, call, callInterface, "Hangup")
        expect(["A connected -> disconnected outgoing '+15557654' reason=local", "idle A"])
    }

    func testOutgoingBusy() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        let call = try mockPath(.ofono, "Dial", try ObjectPath(modem), "+15557654")
        expect(["A new -> dialing.dialing outgoing '+15557654'", "busy A"])
        try setState(call, "alerting")
        expect(["A dialing -> dialing.alerting outgoing '+15557654'"])
        try remoteHangup(call, "remote")
        expect(["A dialing -> disconnected outgoing '+15557654' reason=remote", "idle A"])
    }

    func testWaitingCallThenHoldAndSwapEachTrackedSeparately() throws {
        let first = try startAndRing("+15551111")
        try callMethod(.ofono, first, callInterface, "Answer")
        expect(["A incoming -> connected.active incoming '+15551111'"])

        let second = try mockPath(.ofono, "Wait", try ObjectPath(modem), "+15552222")
        expect(["B new -> incoming.waiting incoming '+15552222'"])

        try callMethod(.ofono, modem, managerInterface, "HoldAndAnswer")
        expect(["A connected -> connected.held incoming '+15551111'",
                "B incoming -> connected.active incoming '+15552222'"])

        try callMethod(.ofono, modem, managerInterface, "SwapCalls")
        expect(["B connected -> connected.held incoming '+15552222'",
                "A connected -> connected.active incoming '+15551111'"])

        try remoteHangup(second, "remote")
        expect(["B connected -> disconnected incoming '+15552222' reason=remote"])
        try callMethod(.ofono, first, callInterface, "Hangup")
        expect(["A connected -> disconnected incoming '+15551111' reason=local", "idle A"])
        XCTAssertEqual(described.filter { $0.hasPrefix("busy") || $0.hasPrefix("idle") }, ["busy A", "idle A"])
    }

    func testCallsLiveAtStartAreInitial() throws {
        try startMock(.ofono, """
            {"calls": [{"state": "active", "number": "+15551234"},
                       {"state": "held", "number": "+15559999", "name": "Bob"}]}
            """)
        try startMonitor(.ofono)
        // oFono has no direction: a call first seen connected has an unknown one.
        expect(["A new -> connected.active unknown '+15551234' initial", "busy A",
                "B new -> connected.held unknown '+15559999' name='Bob' initial"])
        XCTAssertTrue(notices.contains(.synced(.ofono, modems: 1, calls: 2)))
        XCTAssertEqual(call("B")?.modem.eventValue, modem)

        let mark = notices.count
        monitor.resync()
        waitForNotice("the resync", after: mark) { $0 == .synced(.ofono, modems: 1, calls: 2) }
        expectNothingMore()

        try remoteHangup("/phonesim/voicecall01", "remote")
        expect(["A connected -> disconnected unknown '+15551234' reason=remote initial"])
    }

    func testDaemonRestartMidCallEndsItThenResyncs() throws {
        let path = try startAndRing("+15551234")
        try callMethod(.ofono, path, callInterface, "Answer")
        expect(["A incoming -> connected.active incoming '+15551234'"])

        killMock(.ofono)
        expect(["A connected -> disconnected incoming '+15551234' reason=backend-lost", "idle A"])

        let mark = notices.count
        try startMock(.ofono, #"{"calls": [{"state": "active", "number": "+15551234"}]}"#)
        waitForNotice("the resync", after: mark) { $0 == .synced(.ofono, modems: 1, calls: 1) }
        expect(["B new -> connected.active unknown '+15551234' initial", "busy B"])
        XCTAssertEqual(call("B")?.key.path, path)
    }

    func testPathUsedAgainIsANewCall() throws {
        let first = try startAndRing("+15551234")
        try remoteHangup(first, "remote")
        expect(["A incoming -> disconnected incoming '+15551234' reason=remote", "A missed", "idle A"])
        let second = try ring("+15559999")
        XCTAssertEqual(second, first, "oFono hands out the lowest free path")
        expect(["B new -> incoming.ringing incoming '+15559999'", "busy B"])
        XCTAssertNotEqual(call("A")?.id, call("B")?.id)
    }

    func testLateNumberIsAnUpdateAndWithheldIsKept() throws {
        let call = try startAndRing("")
        try mock(.ofono, "SetNumber", try ObjectPath(call), "+15551234")
        expect(["A updated incoming '+15551234'"])
        try remoteHangup(call, "remote")
        expect(["A incoming -> disconnected incoming '+15551234' reason=remote", "A missed", "idle A"])

        _ = try ring("withheld")
        expect(["B new -> incoming.ringing incoming 'withheld'", "busy B"])
    }

    func testSpoofedSignalsHaveNoEffect() throws {
        let call = try startAndRing("+15551234")
        try run(["gdbus", "emit", "--system", "--object-path", call, "--signal", "\(callInterface).PropertyChanged",
                 "'State'", "<'disconnected'>"])
        try run(["dbus-send", "--system", "--type=signal", call, "\(callInterface).DisconnectReason", "string:local"])
        try run(["dbus-send", "--system", "--type=signal", modem, "\(managerInterface).CallRemoved", "objpath:\(call)"])
        try run(["gdbus", "emit", "--system", "--object-path", modem, "--signal", "\(managerInterface).CallAdded",
                 "objectpath '/phonesim/voicecall02'", "{'State': <'incoming'>, 'LineIdentification': <'+1666'>}"])
        try run(["gdbus", "emit", "--system", "--object-path", modem, "--signal", "org.ofono.Modem.PropertyChanged",
                 "'Interfaces'", "<@as []>"])
        try run(["dbus-send", "--system", "--type=signal", "/", "org.ofono.Manager.ModemRemoved", "objpath:\(modem)"])

        try callMethod(.ofono, call, callInterface, "Answer")
        expect(["A incoming -> connected.active incoming '+15551234'"])
        XCTAssertEqual(monitor.liveCalls.map(\.key.path), [call])
        XCTAssertEqual(rejectedNotices, [], "the bus drops signals that do not match sender=")

        openTheDoorToSpoofs(interface: callInterface)
        try run(["gdbus", "emit", "--system", "--object-path", call, "--signal", "\(callInterface).PropertyChanged",
                 "'State'", "<'disconnected'>"])
        waitForNotice("the rejected signal") {
            if case .rejectedSignal(.ofono, let sender, "PropertyChanged") = $0 { return sender.hasPrefix(":") }
            return false
        }
        expectNothingMore()
        XCTAssertEqual(monitor.liveCalls.map(\.state), [.connected])
    }

    func testRejectedNoticesAreRateLimitedPerSender() throws {
        let call = try startAndRing("+15551234")
        openTheDoorToSpoofs(interface: callInterface)
        let spoofer = try Connection(.address(fixture.address), loop: loop)
        defer { spoofer.close() }
        let path = try ObjectPath(call)
        for _ in 0..<8 {
            try spoofer.emit(path: path, interface: callInterface, member: "PropertyChanged", "State",
                             Variant("disconnected"))
        }
        // Once the bus has answered the spoofer, it has routed the spoofs; our pings come back after them.
        _ = try spoofer.callBlocking(destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
                                     member: "GetId")
        expectNothingMore()
        let spoof = BackendNotice.rejectedSignal(.ofono, sender: spoofer.uniqueName, member: "PropertyChanged")
        XCTAssertEqual(rejectedNotices, Array(repeating: spoof, count: 5))

        noticeTime += 11
        let mark = notices.count
        try spoofer.emit(path: path, interface: callInterface, member: "PropertyChanged", "State", Variant("held"))
        waitForNotice("the next spoof", after: mark) { $0 == spoof }
        XCTAssertEqual(Array(notices.suffix(2)), [.rejectedSuppressed(.ofono, sender: spoofer.uniqueName, count: 3), spoof])
        expectNothingMore()
    }

    func testMalformedCallAddedAndBadValuesHaveNoEffectButAnOverlongNumberIsCut() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        let named = try mockPath(.ofono, "EmitMalformedCallAdded", try ObjectPath(modem))
        expectNothingMore()
        XCTAssertTrue(malformedNotices.map(\.description).contains { $0.contains("CallAdded") && $0.contains("'oa{ss}'") },
                      "\(notices)")

        // The path it named is free: a real call takes it, untouched by the malformed one.
        let call = try ring("+15551234")
        XCTAssertEqual(call, named)
        expect(["A new -> incoming.ringing incoming '+15551234'", "busy A"])

        try setState(call, "bogus")
        // 4 KiB: far over the cap, yet small enough for the mock's log pipe, which nobody reads.
        try mock(.ofono, "SetNumber", try ObjectPath(call), String(repeating: "9", count: 4096))
        // Read, too long to keep whole: kept cut and marked (docs/modem-stacks.md §1.6).
        let cut = String(repeating: "9", count: 253) + "…"
        expect(["A updated incoming '\(cut)'"])
        let problems = malformedNotices.map(\.description)
        XCTAssertTrue(problems.contains { $0.contains("unknown call state 'bogus'") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("LineIdentification of 4096 bytes") }, "\(problems)")

        try setState(call, "active")
        expect(["A incoming -> connected.active incoming '\(cut)'"])
    }

    func testPolicyRefusalIsSaidOnceAndCallsAreFollowedFromSignals() throws {
        try startMock(.ofono, #"{"access_denied": true, "calls": [{"state": "active", "number": "+15550001"}]}"#)
        try startMonitor(.ofono)
        expectNothingMore()
        XCTAssertEqual(count { if case .syncRefused(.ofono, let why) = $0 { return why.contains("GetModems") }; return false }, 1,
                       "\(notices)")
        XCTAssertFalse(notices.contains { if case .synced = $0 { return true } else { return false } })

        // CallAdded carries everything, and names the modem by its own path.
        let call = try ring("+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234'", "busy A"])
        XCTAssertEqual(self.call("A")?.modem.eventValue, modem)

        // The call that was there before is seen at its first change, with no modem yet.
        try setState("/phonesim/voicecall01", "held")
        expect(["B new -> connected.held unknown ''"])
        XCTAssertEqual(self.call("B")?.modem, .unknown)

        // Still refused: not said again.
        monitor.resync()
        expectNothingMore()
        XCTAssertEqual(count { if case .syncRefused = $0 { return true } else { return false } }, 1)

        // Once allowed, a resync fills in what signals could not say (flagged: resync is what a
        // resume does, and what it learns was not seen as it happened).
        try mock(.ofono, "SetAccessDenied", false)
        let mark = notices.count
        monitor.resync()
        waitForNotice("the sync", after: mark) { $0 == .synced(.ofono, modems: 1, calls: 2) }
        expect(["B updated unknown '+15550001' resumed"])
        XCTAssertEqual(monitor.liveCalls.first { $0.key.path == "/phonesim/voicecall01" }?.modem.eventValue, modem)

        try remoteHangup(call, "remote")
        expect(["A incoming -> disconnected incoming '+15551234' reason=remote", "A missed"])
    }

    func testModemsAddedPoweredOffAndRemoved() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        let second = try mockPath(.ofono, "AddModem", "second")
        let call = try ring("+15551234", on: second)
        expect(["A new -> incoming.ringing incoming '+15551234'", "busy A"])
        XCTAssertEqual(self.call("A")?.modem.eventValue, second)
        XCTAssertEqual(self.call("A")?.key.path, call)

        // Powering off drops the calls and the VoiceCallManager without CallRemoved.
        try callMethod(.ofono, second, "org.ofono.Modem", "SetProperty", "Powered", Variant(false))
        expect(["A incoming -> disconnected incoming '+15551234' reason=modem-removed", "A missed", "idle A"])

        _ = try ring("+15559999")
        expect(["B new -> incoming.ringing incoming '+15559999'", "busy B"])
        try mock(.ofono, "RemoveModem", try ObjectPath(modem))
        expect(["B incoming -> disconnected incoming '+15559999' reason=modem-removed", "B missed", "idle B"])
    }

    func testAutoFollowsBothStacksAtOnce() throws {
        try startMock(.ofono)
        try startMock(.modemManager)
        try startMonitor(.auto)
        let mmCall = try mockPath(.modemManager, "Ring", ObjectPath("/org/freedesktop/ModemManager1/Modem/0"),
                                  "+15551111")
        expect(["A new -> incoming.ringing incoming '+15551111' reason=incoming-new", "busy A"])
        let ofonoCall = try ring("+15552222")
        expect(["B new -> incoming.ringing incoming '+15552222'"])
        XCTAssertEqual(call("A")?.key.backend, .modemManager)
        XCTAssertEqual(call("B")?.key.backend, .ofono)

        try mock(.modemManager, "RemoteHangup", try ObjectPath(mmCall))
        expect(["A incoming -> disconnected incoming '+15551111' reason=terminated", "A missed"])
        try remoteHangup(ofonoCall, "remote")
        expect(["B incoming -> disconnected incoming '+15552222' reason=remote", "B missed", "idle B"])
    }
}
