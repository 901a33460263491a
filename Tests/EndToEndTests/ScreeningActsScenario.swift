import Foundation
import Glibc
import TestSupport
import XCTest

/// Screening's actions beyond the hang-up on the real daemon (docs/screening.md): `deflect NUMBER`
/// sends the call on at the stack (`AT+CTFR` at the simulated modem), and is rejected instead when
/// the modem refuses; a deflect number no call may go to is a rules error; `run NAME`, the gate
/// opener, runs the rules' command with the caller's number, verbatim, and rejects the call. None
/// of them rings (Debian's real feedbackd, on a second private bus playing the session bus).
extension EndToEndTestCase {
    private static func incomingRing(_ message: MonitoredMessage) -> Bool {
        message.kind == "method call" && message.member == "TriggerFeedback"
            && message.hasArgument(#"string "phone-incoming-call""#)
    }

    /// The `screened` events of the call labelled `label`, as JSON objects.
    private func screenedEvents(_ label: String) -> [[String: Any]] {
        world.callEvents(label).filter { $0["event"] as? String == "screened" }
    }

    private func withoutRunLines(_ lines: [String]) -> [String] {
        lines.filter { !$0.hasPrefix("run-started ") && $0 != "lock-taken sleep/block" && $0 != runStopped }
    }

    func screeningDeflectsACallAtTheStack() throws {
        let session = try BusFixture()
        defer { session.stop() }
        try session.startFeedbackd()
        let traffic = try BusMonitor(session)
        let rules = world.fixture.directory + "/screening.conf"

        // A deflect number no call may go to: the rules are not used (every call rings), said with the line.
        try Files.write(rules, "block +1700*\nblock deflect 112 +1900*\n")
        try startDaemonAndTelwatch(["--screening", rules, "--feedback", "--session-bus", session.address, "--verbose"])
        let watch = try XCTUnwrap(world.telwatch)
        let log = try XCTUnwrap(watch.logPath)
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) {
            watch.log().contains("screening: \(rules):2: deflect: '112' is an emergency number: no call is deflected "
                                 + "to one; screening is off until it is fixed: every call rings")
        }, watch.log())
        // One that would be an AT command of its own at the modem: the same.
        try Files.write(rules, "block deflect +1555;+CFUN=0 +1900*\n")
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) {
            watch.log().contains("screening: \(rules):1: deflect: '+1555;+CFUN=0' is no number to deflect to: "
                                 + "';' is not a dial character; screening is off")
        }, watch.log())
        try Files.write(rules, "# the voicemail\nblock deflect +1-555-987-6543 +1900*\n")
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) { watch.log().contains("screening: read \(rules): 1 numbers") },
                      watch.log())

        // Deflected: the modem is told where to, the call leaves unanswered, and it is no missed call.
        var mark = try modem.mark()
        let caller = "+19005550100"
        try modem.ring(caller)
        try modem.awaitCommand("^AT\\+CTFR=(\\+15559876543|15559876543,145)$", since: mark)
        var lines = withoutRunLines(world.lines(through: runStopped))
        XCTAssertEqual(Array(lines.prefix(2)), [
            line("incoming", "A", detail: "ringing", dir: "incoming", number: caller, live: 1),
            "screened A deflect rule=block hangup=-",
        ])
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertTrue(lines.last?.hasPrefix("disconnected A ") == true && lines.last?.contains(" missed ") == false,
                      "\(lines)")
        XCTAssertNil(try modem.seen(Self.hangUpCommand, since: mark), "deflected, not hung up: \(modem.dialogue)")
        let deflected = try XCTUnwrap(screenedEvents("A").first)
        XCTAssertEqual(deflected["action"] as? String, "deflect")
        XCTAssertEqual(deflected["decision"] as? String, "deflect")
        XCTAssertEqual(deflected["deflect"] as? String, "requested")
        XCTAssertEqual(deflected["deflect_to"] as? String, "+15559876543", "formatting dropped")
        XCTAssertEqual(deflected["source"] as? String, rules + ":2")
        XCTAssertTrue(deflected["hangup"] is NSNull)
        XCTAssertEqual(try modem.calls(), [])

        // A modem without call deflection refuses it: the call is rejected instead, and said so.
        try modem.send("set ctfr-result ERROR")
        mark = try modem.mark()
        let second = "+19005550101"
        try modem.ring(second)
        let ctfr = try modem.awaitCommand("^AT\\+CTFR=", since: mark)
        XCTAssertFalse(ctfr.isEmpty)
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        lines = withoutRunLines(world.lines(through: runStopped))
        XCTAssertEqual(Array(lines.prefix(2)), [
            line("incoming", "B", detail: "ringing", dir: "incoming", number: second, live: 1),
            "screened B deflect rule=block hangup=-",
        ])
        let rejectedLabel: String
        if kind == .modemManager {
            // ModemManager ends its call object as the modem refuses (its reason: an error), while
            // the modem's call rings on; the next RING is a new object, rejected as it comes.
            XCTAssertEqual(lines.count, 3, "\(lines)")
            XCTAssertTrue(lines.last?.hasPrefix("disconnected B ") == true && lines.last?.contains(" missed ") == false,
                          "\(lines)")
            lines = withoutRunLines(world.lines(through: runStopped))
            XCTAssertEqual(lines, [
                line("incoming", "C", detail: "ringing", dir: "incoming", number: second, live: 1),
                "screened C reject rule=block hangup=requested",
                line("disconnected", "C", prev: "incoming", dir: "incoming", number: second, reason: reasons.localHangup,
                     live: 0),
            ])
            rejectedLabel = "C"
        } else {
            XCTAssertEqual(Array(lines.dropFirst(2)), [
                "screened B reject rule=block hangup=requested",
                line("disconnected", "B", prev: "incoming", dir: "incoming", number: second, reason: reasons.localHangup,
                     live: 0),
            ])
            rejectedLabel = "B"
        }
        let rejected = try XCTUnwrap(screenedEvents(rejectedLabel).last)
        XCTAssertEqual(rejected["action"] as? String, "reject")
        XCTAssertEqual(rejected["decision"] as? String, "deflect")
        XCTAssertEqual(rejected["deflect"] as? String, "failed")
        XCTAssertEqual(rejected["hangup"] as? String, "requested")
        XCTAssertFalse((rejected["message"] as? String ?? "").isEmpty, "\(rejected)")
        XCTAssertEqual(try modem.calls(), [])
        world.stopTelwatch()

        let said = world.telwatchLog.split(separator: "\n").filter { $0.contains("screening: the stack did not deflect call") }
        XCTAssertEqual(said.count, 1, world.telwatchLog)
        XCTAssertTrue(said.first?.contains("to +15559876543: ") == true, "\(said)")
        traffic.drain()
        XCTAssertEqual(traffic.seen().filter(Self.incomingRing).count, 0, "no call rang")
        let history = try world.history()
        XCTAssertEqual(history.filter { $0.contains(" missed ") }, [], "none of them is a missed call")
        XCTAssertEqual(history.first?.components(separatedBy: " ").last, "screened=reject")
        XCTAssertEqual(history.last?.components(separatedBy: " ").last, "screened=deflect")
    }

    /// The gate opener: an allowed caller rings, the rules' command runs with the caller's number
    /// and the rule (as a `screened` hook would get them: in its environment, never through a
    /// shell), and the call is rejected: the caller pays nothing, and nothing rings here.
    func screeningRunsTheGateCommandAndRejects() throws {
        let session = try BusFixture()
        defer { session.stop() }
        try session.startFeedbackd()
        let traffic = try BusMonitor(session)
        let directory = world.fixture.directory
        let gate = directory + "/open-gate"
        let received = directory + "/gate.txt"
        // /bin/sh, as every Debian root has it (the arm64 one has no python3); written whole, then
        // renamed: the test waits for the file, never reads half of it. Its argv one a line, a
        // "--", then its TELWATCH_* variables as env prints them (no value here holds a newline).
        try Files.write(gate, """
            #!/bin/sh
            { printf '%s\\n' "$0" "$@"; echo --; env | grep '^TELWATCH_'; } > "$1.new" && mv "$1.new" "$1"

            """, mode: 0o755)
        let rules = directory + "/screening.conf"
        try Files.write(rules, "command open-gate \(gate) \(received) --relay 1\nblock run open-gate +1555*\n")
        try startDaemonAndTelwatch(["--screening", rules, "--feedback", "--session-bus", session.address, "--verbose"])

        // A caller id a shell would act on: it reaches the command as bytes, and nothing runs it.
        let hostile = "+15550001;$(id)`id`|&>x"
        let mark = try modem.mark()
        try modem.ring(hostile)
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        let lines = withoutRunLines(world.lines(through: runStopped))
        XCTAssertEqual(lines, [
            line("incoming", "A", detail: "ringing", dir: "incoming", number: hostile, live: 1),
            "screened A reject rule=block hangup=requested",
            line("disconnected", "A", prev: "incoming", dir: "incoming", number: hostile, reason: reasons.localHangup,
                 live: 0),
        ])
        let screened = try XCTUnwrap(screenedEvents("A").first)
        XCTAssertEqual(screened["command"] as? String, "open-gate")
        XCTAssertEqual(screened["number"] as? String, hostile)

        XCTAssertTrue(Files.waitUntil(received, timeout: 10) { Files.exists(received) }, world.telwatchLog)
        let dump = String(decoding: Files.bytes(received) ?? [], as: UTF8.self).split(separator: "\n").map(String.init)
        let separator = try XCTUnwrap(dump.firstIndex(of: "--"), dump.joined(separator: "\n"))
        XCTAssertEqual(Array(dump[..<separator]), [gate, received, "--relay", "1"], "the rules' argv, nothing added")
        let environment = Dictionary(dump[(separator + 1)...].compactMap { line -> (String, String)? in
            guard let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(environment["TELWATCH_NUMBER"], hostile, "verbatim")
        XCTAssertEqual(environment["TELWATCH_EVENT"], "screened")
        XCTAssertEqual(environment["TELWATCH_SCREENED"], "reject")
        XCTAssertEqual(environment["TELWATCH_SCREENING_COMMAND"], "open-gate")
        XCTAssertEqual(environment["TELWATCH_SCREENING_RULE"], "block (\(rules):2)")
        XCTAssertEqual(environment["TELWATCH_DIRECTION"], "incoming")
        XCTAssertEqual(environment["TELWATCH_CALL_ID"], screened["call_id"] as? String)
        XCTAssertEqual(Files.names(in: directory).filter { $0 == "x" }, [], "no shell redirected anything")

        // Its outcome is said as a hook's is (--verbose: also when it succeeded).
        let log = try XCTUnwrap(world.telwatch?.logPath)
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) {
            world.telwatchLog.contains("hook \(gate) \(received) --relay 1 for screened: exited with status 0")
        }, world.telwatchLog)
        world.stopTelwatch()
        traffic.drain()
        XCTAssertEqual(traffic.seen().filter(Self.incomingRing).count, 0, "nothing rang")
        XCTAssertEqual(try world.history(), [
            "\(hostile) disconnected incoming unanswered reason=\(reasons.localHangup) screened=reject",
        ])
    }
}
