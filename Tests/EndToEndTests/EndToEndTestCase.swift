import DBus
import Foundation
import Glibc
import TestSupport
import XCTest

/// The scenarios, written once for both daemons: each subclass names its daemon and has one test
/// per scenario. Every step drives the simulated modem (the far end) or the daemon's own methods
/// (the user), then reads exactly the events telwatch must print, and checks the inhibitor lock
/// on dbusmock's logind: held exactly while a call is live.
class EndToEndTestCase: XCTestCase {
    var world: EndToEndHarness!
    var modem: ATModem { world.modem }
    var daemon: any TelephonyDaemon { world.daemon }
    var reasons: EndReasons { world.daemon.reasons }

    /// Which daemon the subclass tests.
    var kind: DaemonKind { fatalError("a subclass names its daemon") }
    /// The direction telwatch gives a call it first sees connected (oFono has no direction).
    var initialDirection: String { "incoming" }

    override func setUpWithError() throws {
        // A chosen Debian root is checked by the harness: a missing one fails rather than skips.
        guard StackUnderTest.root(kind) != nil || access(kind.executable, X_OK) == 0 else {
            throw XCTSkip("\(kind.executable) is not installed: the end-to-end tests need Debian's "
                          + "'\(kind.package)' package (./scripts/setup installs it)")
        }
        world = try EndToEndHarness(kind)
    }

    override func tearDown() {
        world?.stop(test: name, failed: (testRun?.totalFailureCount ?? 0) > 0)
        world = nil
    }

    /// The daemon up with its modem registered, then telwatch ready and idle (no lock).
    func startDaemonAndTelwatch(_ extra: [String] = []) throws {
        try daemon.start()
        XCTAssertEqual(try world.startTelwatch(extra), ["backend appeared", "backend synced modems=1 calls=0", "ready"])
        world.assertNoLock("idle, before any call")
    }

    /// A call event line as `EndToEndHarness.summary` writes it.
    func line(_ event: String, _ label: String, state: String? = nil, prev: String? = nil, detail: String? = nil,
              dir: String, number: String, reason: String? = nil, flags: [String] = [], live: Int) -> String {
        var parts = [event, label]
        if let state { parts.append("state=" + state) }
        if let prev { parts.append("prev=" + prev) }
        parts.append("detail=" + (detail ?? "-"))
        parts += ["dir=" + dir, "number=" + number]
        if let reason { parts.append("reason=" + reason) }
        return (parts + flags + ["live=\(live)"]).joined(separator: " ")
    }

    /// A run starting for a call in `reason` state, and its lock taken.
    func runStarted(_ reason: String) -> [String] { ["run-started reason=\(reason)", "lock-taken sleep/block"] }

    /// A new call's first line, with the run it starts. ModemManager announces a call on its
    /// CallAdded, so the run starts (and its lock is asked for) before the call's state is read:
    /// the call's line comes after `run-started`, before or after `lock-taken` as logind and
    /// ModemManager answer. oFono's CallAdded carries the state: the call's line comes first.
    func expectCallStartingARun(_ call: String, reason: String, file: StaticString = #filePath, line: UInt = #line) {
        guard kind == .modemManager else { return world.expect([call] + runStarted(reason), file: file, line: line) }
        let started = "run-started reason=new-call"
        world.expect([started, call, "lock-taken sleep/block"], or: [started, "lock-taken sleep/block", call],
                     file: file, line: line)
    }
    let runStopped = "run-stopped reason=idle"

    /// Rings `number` and answers through the daemon: A is connected and the run holds the lock.
    func incomingAnswered(_ number: String) throws -> String {
        try modem.ring(number)
        expectCallStartingARun(line("incoming", "A", detail: "ringing", dir: "incoming", number: number, live: 1),
                               reason: "incoming")
        world.assertLockHeld("while ringing")
        let call = try world.callPath(number)
        let mark = try modem.mark()
        try daemon.answer(call)
        try modem.awaitCommand("^ATA$", since: mark)
        world.expect([line("connected", "A", prev: "incoming", detail: "active", dir: "incoming", number: number, live: 1)])
        world.assertLockHeld("while connected")
        return call
    }

    // MARK: Scenarios

    func incomingAnsweredThenRemoteHangup() throws {
        try startDaemonAndTelwatch()
        let call = try incomingAnswered("+15551234")

        try modem.remoteHangup()
        world.expect([line("disconnected", "A", prev: "connected", dir: "incoming", number: "+15551234",
                           reason: reasons.remoteHangup, live: 0), runStopped])
        world.assertNoLock("after the call")
        XCTAssertEqual(Set(world.callEvents("A").map { $0["path"] as? String }), [call])
        world.stopTelwatch()
    }

    func incomingMissed() throws {
        try startDaemonAndTelwatch()
        try modem.ring("+15550001")
        expectCallStartingARun(line("incoming", "A", detail: "ringing", dir: "incoming", number: "+15550001", live: 1),
                               reason: "incoming")
        world.assertLockHeld("while ringing")

        try modem.remoteHangup()  // the caller gives up
        let ended = [line("disconnected", "A", prev: "incoming", dir: "incoming", number: "+15550001",
                          reason: reasons.callerGaveUp, flags: ["missed"], live: 0),
                     line("missed", "A", state: "disconnected", dir: "incoming", number: "+15550001",
                          reason: reasons.callerGaveUp, flags: ["missed"], live: 0)]
        world.expect(ended + [runStopped])
        world.assertNoLock("after the missed call")
        world.stopTelwatch()
        XCTAssertEqual(try world.history(), ["+15550001 disconnected incoming unanswered missed unseen "
                                             + "reason=\(reasons.callerGaveUp)"])
    }

    /// A bare RING first, the caller's number (+CLIP) later: one call, updated, not a second one.
    func incomingNumberArrivesLate() throws {
        try startDaemonAndTelwatch()
        let call = try modem.ring("+15550004", numberLater: true)
        expectCallStartingARun(line("incoming", "A", detail: "ringing", dir: "incoming", number: "", live: 1),
                               reason: "incoming")
        try modem.clip(call, "+15550004")
        world.expect([line("updated", "A", state: "incoming", detail: "ringing", dir: "incoming", number: "+15550004",
                           live: 1)])
        try modem.remoteHangup()
        world.expect([line("disconnected", "A", prev: "incoming", dir: "incoming", number: "+15550004",
                           reason: reasons.callerGaveUp, flags: ["missed"], live: 0),
                      line("missed", "A", state: "disconnected", dir: "incoming", number: "+15550004",
                           reason: reasons.callerGaveUp, flags: ["missed"], live: 0), runStopped])
        world.assertNoLock("after the missed call")
        world.stopTelwatch()
    }

    func outgoingAnsweredThenLocalHangup() throws {
        try startDaemonAndTelwatch()
        let number = "+15557654"
        let mark = try modem.mark()
        let call = try daemon.dial(number)
        try modem.awaitCommand("^ATD\\+15557654;$", since: mark)
        expectCallStartingARun(line("dialing", "A", detail: "dialing", dir: "outgoing", number: number, live: 1),
                               reason: "dialing")
        world.assertLockHeld("while dialing")

        try modem.alerting()
        world.expect([line("dialing", "A", prev: "dialing", detail: "alerting", dir: "outgoing", number: number, live: 1)])
        try modem.remoteAnswer()
        world.expect([line("connected", "A", prev: "dialing", detail: "active", dir: "outgoing", number: number, live: 1)])
        world.assertLockHeld("while connected")

        try daemon.hangup(call)
        world.expect([line("disconnected", "A", prev: "connected", dir: "outgoing", number: number,
                           reason: reasons.localHangup, live: 0), runStopped])
        world.assertNoLock("after the call")
        XCTAssertEqual(try modem.calls(), [], "the simulated modem has no call left")
        world.stopTelwatch()
    }

    func outgoingBusy() throws {
        try startDaemonAndTelwatch()
        let number = "+15550002"
        _ = try daemon.dial(number)
        expectCallStartingARun(line("dialing", "A", detail: "dialing", dir: "outgoing", number: number, live: 1),
                               reason: "dialing")
        try modem.busy()
        world.expect([line("disconnected", "A", prev: "dialing", dir: "outgoing", number: number,
                           reason: reasons.busy, live: 0), runStopped])
        world.assertNoLock("after the busy call")
        world.stopTelwatch()
    }

    func secondCallWaitingThenHoldAndAnswer() throws {
        try startDaemonAndTelwatch()
        _ = try incomingAnswered("+15551111")

        let second = try modem.waiting("+15552222")
        world.expect([line("incoming", "B", detail: "waiting", dir: "incoming", number: "+15552222", live: 2)])
        let mark = try modem.mark()
        try daemon.holdAndAnswer()
        try modem.awaitCommand("^AT\\+CHLD=2$", since: mark)
        world.expect([line("connected", "A", prev: "connected", detail: "held", dir: "incoming", number: "+15551111", live: 2),
                      line("connected", "B", prev: "incoming", detail: "active", dir: "incoming", number: "+15552222", live: 2)])
        world.assertLockHeld("one call held, one active")

        try modem.remoteHangup(second)
        world.expect([line("disconnected", "B", prev: "connected", dir: "incoming", number: "+15552222",
                           reason: reasons.remoteHangup, live: 1)])
        world.assertLockHeld("the held call is still live")

        try daemon.hangupAll()
        world.expect([line("disconnected", "A", prev: "connected", dir: "incoming", number: "+15551111",
                           reason: reasons.hangupAll, live: 0), runStopped])
        world.assertNoLock("after both calls")
        XCTAssertEqual(try modem.calls(), [], "the simulated modem has no call left")
        world.stopTelwatch()
        XCTAssertEqual(try world.history(), ["+15552222 disconnected incoming answered reason=\(reasons.remoteHangup)",
                                             "+15551111 disconnected incoming answered reason=\(reasons.hangupAll)"])
    }

    func daemonKilledMidCallThenRestarted() throws {
        try startDaemonAndTelwatch()
        let number = "+15553333"
        let first = try incomingAnswered(number)
        let firstID = world.callEvents("A").first?["call_id"] as? String

        daemon.kill()
        world.expect(["backend vanished",
                      line("disconnected", "A", prev: "connected", dir: "incoming", number: number,
                           reason: "backend-lost", live: 0), runStopped])
        world.assertNoLock("the daemon is gone")

        // The modem still carries the call. telwatch syncs with the daemon before its modem is up.
        let restart = try modem.mark()
        try daemon.launch()
        world.expect(["backend appeared", "backend synced modems=0 calls=0"])
        try daemon.bringUp()
        if daemon.findsLiveCallsWhenRestarted {
            // It reads the modem's call list when the modem comes up: the call is back, as a new
            // call (a new id; no direction known, since it was first seen active). It is `initial`
            // when telwatch's GetCalls (sent when the modem gains its VoiceCallManager) lists it
            // before oFono's CallAdded announces it: oFono's AT exchange and the bus race.
            let found = { (flags: [String]) in
                [self.line("connected", "B", detail: "active", dir: "unknown", number: number, flags: flags, live: 1)]
                    + self.runStarted("connected")
            }
            world.expect(found([]), or: found(["initial"]))
            world.assertLockHeld("the call found again after the restart")
            XCTAssertEqual(world.callEvents("B").first?["path"] as? String, try world.callPath(number))
            let flags = world.callEvents("B").first?["initial"] as? Bool == true ? ["initial"] : []
            try modem.remoteHangup()
            world.expect([line("disconnected", "B", prev: "connected", dir: "unknown", number: number,
                               reason: reasons.remoteHangup, flags: flags, live: 0), runStopped])
        } else {
            // Starting, it sends ATH (ending the modem's calls) and never AT+CLCC: no call.
            try modem.awaitCommand("^ATH$", since: restart)
            XCTAssertEqual(try modem.calls(), [], "the daemon's start-up hung the call up")
            XCTAssertEqual(try daemon.liveCalls(), [:])
            // telwatch follows the new daemon: a new call there, on the same path as before.
            try modem.ring("+15550003")
            expectCallStartingARun(line("incoming", "B", detail: "ringing", dir: "incoming", number: "+15550003", live: 1),
                                   reason: "incoming")
            XCTAssertEqual(world.callEvents("B").first?["path"] as? String, first, "the restarted daemon reuses the path")
            try modem.remoteHangup()
            world.expect([line("disconnected", "B", prev: "incoming", dir: "incoming", number: "+15550003",
                               reason: reasons.callerGaveUp, flags: ["missed"], live: 0),
                          line("missed", "B", state: "disconnected", dir: "incoming", number: "+15550003",
                               reason: reasons.callerGaveUp, flags: ["missed"], live: 0), runStopped])
        }
        XCTAssertNotEqual(world.callEvents("B").first?["call_id"] as? String, firstID, "a new call id")
        world.assertNoLock("after the call")
        world.stopTelwatch()
    }

    /// telwatch killed mid-call (the stack keeps the call) and started again: the call goes on
    /// under the id, first sight and answer it had (docs/modem-stacks.md §1.8), in the event stream
    /// as in the history, even on oFono, which gives no direction (the remembered one stands).
    func telwatchKilledMidCallThenRestarted() throws {
        try startDaemonAndTelwatch()
        let number = "+15556666"
        _ = try incomingAnswered(number)
        let answered = try XCTUnwrap(world.callEvents("A").last)
        world.killTelwatch()

        let found = line("connected", "A", detail: "active", dir: "incoming", number: number, flags: ["initial"], live: 1)
        let start = try world.startTelwatch()
        XCTAssertTrue(start.contains(found), "the call goes on as A: \(start)")
        XCTAssertFalse(start.contains { $0.contains(" B ") }, "no new call: \(start)")
        let again = try XCTUnwrap(world.callEvents("A").last)
        for key in ["call_id", "first_seen", "connected_at"] {
            XCTAssertEqual(again[key] as? String, answered[key] as? String, key)
        }
        world.assertLockHeld("the call found again holds a run")

        try modem.remoteHangup()
        let ended = line("disconnected", "A", prev: "connected", dir: "incoming", number: number,
                         reason: reasons.remoteHangup, flags: ["initial"], live: 0)
        let rest = world.lines(through: runStopped)
        XCTAssertTrue(rest.contains(ended), "\(rest)")
        world.assertNoLock("after the call")
        world.stopTelwatch()
        XCTAssertEqual(try world.history(), ["\(number) disconnected incoming answered reason=\(reasons.remoteHangup)"],
                       "one call, one row")
    }

    func callLiveBeforeTelwatchStartsIsInitial() throws {
        try daemon.start()
        let number = "+15554444"
        try modem.ring(number)
        let call = try world.waitForCall(number)
        try daemon.answer(call)
        try modem.awaitCommand("^ATA$")

        let startup = try world.startTelwatch()
        // The lock is asked for when the run starts; its answer comes after the sync's last reply.
        XCTAssertEqual(startup, ["backend appeared",
                                 line("connected", "A", detail: "active", dir: initialDirection, number: number,
                                      flags: ["initial"], live: 1),
                                 "run-started reason=connected", "backend synced modems=1 calls=1", "ready"])
        world.expect(["lock-taken sleep/block"])
        world.assertLockHeld("the call live at start")

        try modem.remoteHangup()
        world.expect([line("disconnected", "A", prev: "connected", dir: initialDirection, number: number,
                           reason: reasons.remoteHangup, flags: ["initial"], live: 0), runStopped])
        world.assertNoLock("after the call")
        world.stopTelwatch()
    }
}
