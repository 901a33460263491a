import DBus
import Glibc
import TestSupport
import XCTest
@testable import CallMonitor

/// `CallMonitor.resync()` after a resume, against the project's fakes on a private bus.
///
/// How a sleep is played: a real suspend freezes every process, ModemManager, oFono and the bus
/// included, so no signal is "missed" by telwatch alone. What a sleep loses are the modem's
/// events that nobody turned into signals (a RING while the port slept, a call list the daemon
/// only re-reads on resume): the state changed, and only reading it back tells. Stopping the
/// telwatch side with SIGSTOP would not model that: the bus queues every signal and delivers them
/// on SIGCONT. So while "asleep" the fakes drop their signals (`LoseSignals`, see
/// Tests/Fixtures/dbusmock/README.md) while their state changes as usual, and the test checks that
/// nothing was heard before the resync, and what the resync then reports.
final class ResumeResyncTests: MonitorTestCase {
    let mmModem = "/org/freedesktop/ModemManager1/Modem/0"
    let callInterface = "org.freedesktop.ModemManager1.Call"
    let phonesim = "/phonesim"

    private func mmCall(_ member: String, _ number: String) throws -> String {
        try mockPath(.modemManager, member, try ObjectPath(mmModem), number)
    }

    private func ofonoCall(_ member: String, _ number: String) throws -> String {
        try mockPath(.ofono, member, try ObjectPath(phonesim), number)
    }

    func testModemManagerACallThatRangAndEndedWhileAsleepIsMissedAfterTheResume() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        try loseSignals(.modemManager, true)
        let path = try mmCall("Ring", "+15559876")
        try mock(.modemManager, "RemoteHangup", try ObjectPath(path))
        XCTAssertGreaterThan(try loseSignals(.modemManager, false), 0, "the fake did drop signals")
        expectNothingMore()  // nothing was heard: only the listing knows

        resumeResync()
        expect(["A incoming -> disconnected incoming '+15559876' reason=terminated resumed", "A missed"])
        XCTAssertEqual(call("A")?.key.path, path, "the terminated call, still listed")
        XCTAssertTrue(call("A")?.resumed == true)
        XCTAssertEqual(monitor.liveCalls, [])

        // It stays listed (nobody deletes it): the next resume does not report it again.
        resumeResync()
        expectNothingMore()
    }

    func testModemManagerReconcilesLiveCallsAcrossASleep() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        let kept = try mmCall("Ring", "+15550001")
        try callMethod(.modemManager, kept, callInterface, "Accept")
        let answered = try mmCall("Ring", "+15550002")
        let ended = try mmCall("Wait", "+15550003")
        let deleted = try mmCall("Wait", "+15550004")
        // A was answered while its first read was out: it starts from the state before the change.
        expect(["A new -> incoming.ringing incoming '+15550001'", "busy A",
                "A incoming -> connected.active incoming '+15550001' reason=accepted",
                "B new -> incoming.ringing incoming '+15550002' reason=incoming-new",
                "C new -> incoming.waiting incoming '+15550003' reason=incoming-new",
                "D new -> incoming.waiting incoming '+15550004' reason=incoming-new"])

        try loseSignals(.modemManager, true)
        try callMethod(.modemManager, answered, callInterface, "Accept")
        try mock(.modemManager, "RemoteHangup", try ObjectPath(ended))
        try mock(.modemManager, "RemoteHangup", try ObjectPath(deleted))
        try mock(.modemManager, "Delete", try ObjectPath(deleted))
        try loseSignals(.modemManager, false)
        expectNothingMore()

        resumeResync()
        // Read again newest first (ListCalls' order); the call not listed any more ends last.
        expect(["C incoming -> disconnected incoming '+15550003' reason=terminated resumed", "C missed",
                "B incoming -> connected.active incoming '+15550002' reason=accepted resumed",
                "D incoming -> disconnected incoming '+15550004' reason=removed resumed", "D missed"])
        XCTAssertEqual(monitor.liveCalls.map(\.number), ["+15550001", "+15550002"], "A is not reported twice")

        // Signals flow again: the calls are followed as before, unflagged.
        try mock(.modemManager, "RemoteHangup", try ObjectPath(kept))
        expect(["A connected -> disconnected incoming '+15550001' reason=terminated"])
        resumeResync()
        expectNothingMore()
    }

    func testOfonoReconcilesLiveCallsButCannotSeeACallThatCameAndWent() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        let kept = try ofonoCall("Ring", "+15550001")
        try mock(.ofono, "SetState", try ObjectPath(kept), "active")
        let ended = try ofonoCall("Dial", "+15550002")
        try mock(.ofono, "SetState", try ObjectPath(ended), "active")
        expect(["A new -> incoming.ringing incoming '+15550001'", "busy A",
                "A incoming -> connected.active incoming '+15550001'",
                "B new -> dialing.dialing outgoing '+15550002'",
                "B dialing -> connected.active outgoing '+15550002'"])

        try loseSignals(.ofono, true)
        try mock(.ofono, "RemoteHangup", try ObjectPath(ended), "remote")
        // oFono forgets a call the moment it ends: this one leaves nothing behind to find.
        let unseen = try ofonoCall("Ring", "+15559999")
        try mock(.ofono, "RemoteHangup", try ObjectPath(unseen), "remote")
        try loseSignals(.ofono, false)
        expectNothingMore()

        resumeResync()
        expect(["B connected -> disconnected outgoing '+15550002' reason=removed resumed"])
        XCTAssertEqual(monitor.liveCalls.map(\.number), ["+15550001"], "A is not reported twice")
        resumeResync()
        expectNothingMore()
    }

    func testOfonoAPathHandedToANewCallWhileAsleepIsANewCall() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        let first = try ofonoCall("Ring", "+15550001")
        try mock(.ofono, "SetState", try ObjectPath(first), "active")
        expect(["A new -> incoming.ringing incoming '+15550001'", "busy A",
                "A incoming -> connected.active incoming '+15550001'"])

        try loseSignals(.ofono, true)
        try mock(.ofono, "RemoteHangup", try ObjectPath(first), "remote")
        let second = try ofonoCall("Ring", "+15550002")
        try loseSignals(.ofono, false)
        XCTAssertEqual(second, first, "oFono reuses the freed path at once")

        resumeResync()
        expect(["B new -> incoming.ringing incoming '+15550002' resumed",
                "A connected -> disconnected incoming '+15550001' reason=removed resumed"])
        XCTAssertEqual(monitor.liveCalls.map(\.number), ["+15550002"])
        XCTAssertFalse(described.contains { $0.hasPrefix("idle") || $0.hasPrefix("busy B") },
                       "a call was live throughout: the run goes on")
    }
}
