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
        let hangup = try modem.awaitCommand("^(ATH|AT\\+CHUP|AT\\+CHLD=1[0-9])$", since: mark)
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

    /// The rules that speak of who calls and when, on the real daemon: a contact rings through
    /// quiet hours (a window around the clock: the moment is whatever now is), an unknown caller
    /// is silenced by them and rings when calling again (the repeat caller), a withheld caller is
    /// rejected (oFono says `withheld` at once, or, when its CLCC poll found the call first, keeps
    /// no number as ModemManager does: decided after `CallScreener.withheldAfter`), and a number
    /// that arrives late is screened on arrival.
    func screeningByWhoCallsAndWhen() throws {
        let session = try BusFixture()
        defer { session.stop() }
        try session.startFeedbackd()
        let traffic = try BusMonitor(session)
        let contacts = world.fixture.directory + "/contacts.vcf"
        try Files.write(contacts, "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Alice\r\nTEL:+15550000001\r\nEND:VCARD\r\n")
        let rules = world.fixture.directory + "/screening.conf"
        try Files.write(rules, """
            withheld reject
            block +1900*
            quiet 00:00-24:00 daily silence
            except contacts
            except repeat 15m

            """)
        try startDaemonAndTelwatch(["--screening", rules, "--contacts", contacts, "--feedback",
                                    "--session-bus", session.address])
        /// Rings `number`, waits for telwatch's word on it; the far end gives up unless telwatch hung up.
        func ring(_ number: String, _ said: String, farEndGivesUp: Bool = true) throws {
            _ = try modem.ring(number)
            XCTAssertEqual(world.lines(through: said).last, said, "for \(number)")
            if farEndGivesUp { try modem.remoteHangup() }
            XCTAssertEqual(world.lines(through: runStopped).last, runStopped)
        }
        let unknown = "+15550000002"
        try ring("+15550000001", "screened A allow rule=contact hangup=-")
        try ring(unknown, "screened B silence rule=quiet hangup=-")
        try ring(unknown, "screened C allow rule=repeat hangup=-")
        // ModemManager releases a call whose index it knows with AT+CHLD=1X (its CLCC poll found it).
        let hangUp = "^(ATH|AT\\+CHUP|AT\\+CHLD=1[0-9])$"
        var mark = try modem.mark()
        try ring("-", "screened D reject rule=withheld hangup=requested", farEndGivesUp: false)
        XCTAssertFalse(try modem.awaitCommand(hangUp, since: mark).isEmpty)

        // A number that comes after the ring: screened when it comes.
        mark = try modem.mark()
        let late = try modem.ring("+19005550100", numberLater: true)
        let first = line("incoming", "E", detail: "ringing", dir: "incoming", number: "", live: 1)
        XCTAssertEqual(world.lines(through: first).last, first)
        try modem.clip(late, "+19005550100")
        let said = "screened E reject rule=block hangup=requested"
        XCTAssertEqual(world.lines(through: said).last, said)
        XCTAssertFalse(try modem.awaitCommand(hangUp, since: mark).isEmpty)
        XCTAssertEqual(world.lines(through: runStopped).last, runStopped)
        world.stopTelwatch()

        // Rings: the contact, the repeat caller, the late number until it came, and the withheld
        // caller if the stack left it numberless (ModemManager always; oFono when its CLCC poll found
        // the call first), until it counted as withheld. No missed-call sound but the contact's and
        // the repeat caller's (silenced, rejected: none).
        traffic.drain()
        let rings = traffic.seen().filter { $0.member == "TriggerFeedback" && $0.hasArgument(#"string "phone-incoming-call""#) }
        let withheldRang = world.callEvents("D").first?["number"] as? String == ""
        XCTAssertEqual(rings.count, withheldRang ? 4 : 3, "\(rings)")
        XCTAssertEqual(traffic.seen().filter { $0.member == "TriggerFeedback" && $0.hasArgument(#"string "phone-missed-call""#) }
                        .count, 2)
        let screenedColumn = try world.history().map { $0.components(separatedBy: " ").last ?? "" }
        XCTAssertEqual(screenedColumn, ["screened=reject", "screened=reject", "screened=allow", "screened=silence",
                                        "screened=allow"], "newest first")
    }

    /// An outgoing call to an emergency number keeps every rule off for an hour: the service's
    /// call-back rings, though its number is blocked (docs/screening.md, "Emergencies").
    func screeningStandsAsideAfterAnEmergencyCall() throws {
        let rules = world.fixture.directory + "/screening.conf"
        try Files.write(rules, "block +1900*\nunknown reject\n")
        try startDaemonAndTelwatch(["--screening", rules])
        let mark = try modem.mark()
        let emergency = try daemon.dial("112")
        try modem.awaitCommand("^ATD112;$", since: mark)
        let dialing = line("dialing", "A", detail: "dialing", dir: "outgoing", number: "112", live: 1)
        XCTAssertEqual(world.lines(through: dialing).last, dialing)
        try modem.remoteAnswer()
        let answered = line("connected", "A", prev: "dialing", detail: "active", dir: "outgoing", number: "112", live: 1)
        XCTAssertEqual(world.lines(through: answered).last, answered)
        try daemon.hangup(emergency)
        XCTAssertEqual(world.lines(through: runStopped).last, runStopped)

        // The call-back, from a number a rule blocks: it rings, and says why.
        _ = try modem.ring("+19005550100")
        let said = "screened B allow rule=emergency hangup=-"
        XCTAssertEqual(world.lines(through: said).last, said)
        try modem.remoteHangup()
        XCTAssertEqual(world.lines(through: runStopped).last, runStopped)
        world.stopTelwatch()
    }

    /// ModemManager asks polkit before `Hangup`: refused (the polkit stand-in now says no), the
    /// blocked call rings after all, and telwatch says so once (docs/screening.md, "Failing open").
    func screeningRefusedHangUpRings() throws {
        let session = try BusFixture()
        defer { session.stop() }
        try session.startFeedbackd()
        let traffic = try BusMonitor(session)
        let rules = world.fixture.directory + "/screening.conf"
        try Files.write(rules, "block +1900*\n")
        try startDaemonAndTelwatch(["--screening", rules, "--feedback", "--session-bus", session.address])
        try world.bus.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                               "org.freedesktop.DBus.Mock", "AllowUnknown", [.bool(false)])
        _ = try modem.ring("+19005550100")
        let failed = "screened A allow rule=block hangup=failed"
        let lines = world.lines(through: failed)
        XCTAssertEqual(lines.last, failed)
        XCTAssertTrue(lines.contains("screened A reject rule=block hangup=requested"), "\(lines)")
        XCTAssertNotNil(traffic.waitFor { $0.member == "TriggerFeedback" && $0.hasArgument(#"string "phone-incoming-call""#) },
                        "the call rings after all")
        try modem.remoteHangup()
        XCTAssertEqual(world.lines(through: runStopped).last, runStopped)
        world.stopTelwatch()
        let log = world.telwatchLog
        let said = log.split(separator: "\n").filter { $0.contains("screening: the stack did not hang up") }
        XCTAssertEqual(said.count, 1, log)
        XCTAssertEqual(try world.history().first?.components(separatedBy: " ").last, "screened=allow")
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
