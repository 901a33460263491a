import Glibc
import TestSupport
import XCTest

/// Call screening on the real daemon (docs/screening.md): a blocked caller is hung up at the stack
/// (the simulated modem receives the hang-up and the call ends), an allowed one rings, an outgoing
/// call to a blocked number is untouched; Debian's real feedbackd, on a second private bus playing
/// the user's session bus, gets no ring for the blocked call. Written once for both daemons.
extension EndToEndTestCase {
    /// A call's lines up to the run's end, without the run's own lines: whether the lock's answer
    /// comes before the call's first line, after its `screened` line or after its end is logind's
    /// and the daemon's timing, not telwatch's.
    private func callLines(file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let lines = world.lines(through: runStopped)
        XCTAssertEqual(lines.last, runStopped, "the run ended", file: file, line: line)
        return withoutRunLines(lines)
    }

    private func withoutRunLines(_ lines: [String]) -> [String] {
        lines.filter { !$0.hasPrefix("run-started ") && $0 != "lock-taken sleep/block" && $0 != runStopped }
    }

    func screeningHangsUpABlockedCallerAtTheStack() throws {
        let session = try BusFixture()
        defer { session.stop() }
        try session.startFeedbackd()
        let traffic = try BusMonitor(session)
        let incomingRing: (MonitoredMessage) -> Bool = {
            $0.kind == "method call" && $0.member == "TriggerFeedback" && $0.hasArgument(#"string "phone-incoming-call""#)
        }
        let rules = world.fixture.directory + "/screening.conf"
        try Files.write(rules, "block +1900*\nallow +19005550111\n")
        try startDaemonAndTelwatch(["--screening", rules, "--feedback", "--session-bus", session.address])

        // A blocked caller: telwatch asks the daemon to hang up, the daemon tells the modem.
        let blocked = "+19005550100"
        let mark = try modem.mark()
        try modem.ring(blocked)
        let hangup = try modem.awaitCommand("^(ATH|AT\\+CHUP)$", since: mark)
        XCTAssertFalse(hangup.isEmpty)
        XCTAssertEqual(callLines(), [
            line("incoming", "A", detail: "ringing", dir: "incoming", number: blocked, live: 1),
            "screened A reject rule=block hangup=requested",
            // Not missed: no `missed` line, and no missed-call feedback.
            line("disconnected", "A", prev: "incoming", dir: "incoming", number: blocked, reason: reasons.localHangup,
                 live: 0),
        ])
        XCTAssertEqual(try modem.calls(), [], "the far end's call ended")
        world.assertNoLock("after the screened call")

        // An allowed number (in the blocked prefix) rings as any call does.
        let allowed = "+19005550111"
        try modem.ring(allowed)
        XCTAssertNotNil(traffic.waitFor(incomingRing), "the allowed call did not ring")
        try modem.remoteHangup()
        XCTAssertEqual(callLines(), [
            line("incoming", "B", detail: "ringing", dir: "incoming", number: allowed, live: 1),
            "screened B allow rule=allow hangup=-",
            line("disconnected", "B", prev: "incoming", dir: "incoming", number: allowed, reason: reasons.callerGaveUp,
                 flags: ["missed"], live: 0),
            line("missed", "B", state: "disconnected", dir: "incoming", number: allowed, reason: reasons.callerGaveUp,
                 flags: ["missed"], live: 0),
        ])

        // An outgoing call to a blocked number is never screened: it is answered, and hung up by the user.
        let dialled = "+19005550122"
        let dialing = line("dialing", "C", detail: "dialing", dir: "outgoing", number: dialled, live: 1)
        let alerting = line("dialing", "C", prev: "dialing", detail: "alerting", dir: "outgoing", number: dialled, live: 1)
        let answered = line("connected", "C", prev: "dialing", detail: "active", dir: "outgoing", number: dialled, live: 1)
        let call = try daemon.dial(dialled)
        var lines = world.lines(through: dialing)
        try modem.alerting()
        lines += world.lines(through: alerting)
        try modem.remoteAnswer()
        lines += world.lines(through: answered)
        try daemon.hangup(call)
        lines += world.lines(through: runStopped)
        XCTAssertEqual(withoutRunLines(lines), [
            dialing, alerting, answered,
            line("disconnected", "C", prev: "connected", dir: "outgoing", number: dialled, reason: reasons.localHangup,
                 live: 0),
        ])
        world.stopTelwatch()

        // One ring in all, and one missed call: the allowed call's.
        traffic.drain()
        XCTAssertEqual(traffic.seen().filter(incomingRing).count, 1, "the blocked call never rang")
        XCTAssertEqual(traffic.seen().filter { $0.member == "TriggerFeedback" && $0.hasArgument(#"string "phone-missed-call""#) }
                        .count, 1)
        XCTAssertEqual(try world.history(), [
            "\(dialled) disconnected outgoing answered reason=\(reasons.localHangup)",
            "\(allowed) disconnected incoming unanswered missed unseen reason=\(reasons.callerGaveUp) screened=allow",
            "\(blocked) disconnected incoming unanswered reason=\(reasons.localHangup) screened=reject",
        ])
    }

    /// `telwatch block` and `telwatch allow` while telwatch runs (docs/screening.md, "From the
    /// command line"): the next call from the number is hung up at the stack, then rings. telwatch
    /// says (--verbose, on stderr) when it has read the replaced file: the test waits for that.
    func blockAndAllowFromTheCommandLineReachARunningTelwatch() throws {
        let rules = world.fixture.directory + "/screening.conf"
        try Files.write(rules, "# telwatch block and allow write here\n")
        try startDaemonAndTelwatch(["--screening", rules, "--verbose"])
        let watch = try XCTUnwrap(world.telwatch)
        let log = try XCTUnwrap(watch.logPath)
        func reads() -> Int { watch.log().components(separatedBy: "screening: read \(rules): ").count - 1 }
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) { reads() == 1 }, watch.log())
        let number = "+15550177"
        func edit(_ command: String, reads count: Int) throws {
            let result = try world.fixture.run(StackUnderTest.telwatchCommand + [command, "--screening", rules, number])
            XCTAssertEqual(result.status, .exited(0), result.log)
            XCTAssertTrue(Files.waitUntil(log, timeout: 10) { reads() == count }, watch.log())
        }

        try edit("block", reads: 2)
        let mark = try modem.mark()
        try modem.ring(number)
        XCTAssertFalse(try modem.awaitCommand("^(ATH|AT\\+CHUP)$", since: mark).isEmpty, "the modem was told to hang up")
        XCTAssertEqual(callLines(), [
            line("incoming", "A", detail: "ringing", dir: "incoming", number: number, live: 1),
            "screened A reject rule=block hangup=requested",
            line("disconnected", "A", prev: "incoming", dir: "incoming", number: number, reason: reasons.localHangup,
                 live: 0),
        ])

        try edit("allow", reads: 3)
        try modem.ring(number)
        let allowed = "screened B allow rule=allow hangup=-"
        var lines = world.lines(through: allowed)
        try modem.remoteHangup()
        lines += world.lines(through: runStopped)
        XCTAssertEqual(withoutRunLines(lines), [
            line("incoming", "B", detail: "ringing", dir: "incoming", number: number, live: 1),
            allowed,
            line("disconnected", "B", prev: "incoming", dir: "incoming", number: number, reason: reasons.callerGaveUp,
                 flags: ["missed"], live: 0),
            line("missed", "B", state: "disconnected", dir: "incoming", number: number, reason: reasons.callerGaveUp,
                 flags: ["missed"], live: 0),
        ])
        world.stopTelwatch()
        XCTAssertEqual(try world.history(), [
            "\(number) disconnected incoming unanswered missed unseen reason=\(reasons.callerGaveUp) screened=allow",
            "\(number) disconnected incoming unanswered reason=\(reasons.localHangup) screened=reject",
        ])
    }
}
