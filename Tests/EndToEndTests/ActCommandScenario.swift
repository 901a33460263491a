import Foundation
import Loop
import TestSupport
import XCTest

/// `telwatch answer|hangup|deflect|tones|dial`, the real binary, against a running `telwatch
/// watch` on the real daemon and the simulated modem: each act reaches the modem as its AT
/// command and is an `acted` event by `cli`; each refusal is one line on stderr with its exit
/// status, and nothing of a refused number reaches the modem. Written once for both daemons.
extension EndToEndTestCase {
    /// One act command run to its end on the test bus.
    func telwatchCommand(_ words: [String], file: StaticString = #filePath,
                         line: UInt = #line) throws -> (status: ChildExit?, output: String, log: String) {
        let result = try world.fixture.run(StackUnderTest.telwatchCommand + [words[0], "--bus", world.fixture.address]
                                           + words.dropFirst(), timeout: 60)
        XCTAssertNotNil(result.status, "telwatch \(words) did not end", file: file, line: line)
        return result
    }

    /// Runs `words`, which must be refused with `status`, in one line on stderr containing `saying`.
    func assertRefused(_ words: [String], _ status: Int32, saying: String, file: StaticString = #filePath,
                       line: UInt = #line) throws {
        let result = try telwatchCommand(words, file: file, line: line)
        XCTAssertEqual(result.status, .exited(status), "\(words): \(result.log)", file: file, line: line)
        XCTAssertEqual(result.output, "", "\(words): nothing on stdout", file: file, line: line)
        let lines = result.log.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "\(words): one line on stderr: \(result.log)", file: file, line: line)
        XCTAssertTrue(result.log.contains(saying), "\(words): \(result.log)", file: file, line: line)
        XCTAssertFalse(result.log.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" },
                       "\(words): no control character reaches the terminal: \(result.log.debugDescription)",
                       file: file, line: line)
    }

    /// Waits for telwatch's line summarised as `summary`, among the lines from `index` on,
    /// also if it was read already.
    func awaitLine(_ summary: String, since index: Int, file: StaticString = #filePath, line: UInt = #line) {
        let read = world.transcript[index...].compactMap(JSONLine.object).map(world.summary)
        if read.contains(summary) { return }
        XCTAssertEqual(world.lines(through: summary).last, summary, "telwatch printed \(summary)", file: file, line: line)
    }

    private func ringing(_ label: String, _ number: String, detail: String = "ringing", live: Int) -> String {
        line("incoming", label, detail: detail, dir: "incoming", number: number, live: live)
    }

    func actsFromTheCommandLine() throws {
        try startDaemonAndTelwatch()

        // answer, with no call named: the one that rings.
        let number = "+15551234"
        var index = world.transcript.count
        var mark = try modem.mark()
        try modem.ring(number)
        awaitLine(ringing("A", number, live: 1), since: index)
        let id = try XCTUnwrap(world.callEvents("A").first?["call_id"] as? String)
        index = world.transcript.count
        let answered = try telwatchCommand(["answer"])
        XCTAssertEqual(answered.status, .exited(0), answered.log)
        XCTAssertEqual(answered.output, "answered \(id.prefix(8)) (\(number))\n")
        try modem.awaitCommand("^ATA$", since: mark)
        awaitLine("acted answer A by=cli result=ok", since: index)
        awaitLine(line("connected", "A", prev: "incoming", detail: "active", dir: "incoming", number: number, live: 1),
                  since: index)
        try assertRefused(["answer", id], 8, saying: "answer: the call does not ring")
        try assertRefused(["deflect", "+15559876543"], 6,
                          saying: "deflect: no call rings (live: \(id.prefix(8)) connected); name one: telwatch deflect CALL")

        // tones, with no call named: the active one, in order.
        mark = try modem.mark()
        let tones = try telwatchCommand(["tones", "1#9"])
        XCTAssertEqual(tones.status, .exited(0), tones.log)
        XCTAssertEqual(tones.output, "sent 1#9 on \(id.prefix(8)) (\(number))\n")
        var after = mark
        let each = ["+VTS=1", "+VTS=#", "+VTS=9"]
        for command in kind == .modemManager ? each.map({ "AT" + $0 }) : ["AT" + each.joined(separator: ";")] {
            let pattern = "^" + NSRegularExpression.escapedPattern(for: command) + "$"
            let seen = try XCTUnwrap(try modem.seen(pattern, since: after), "\(command): \(modem.dialogue)")
            after = seen.count
        }

        // hangup, the call named by the start of its id as status shows it.
        mark = try modem.mark()
        index = world.transcript.count
        let hungUp = try telwatchCommand(["hangup", String(id.prefix(8))])
        XCTAssertEqual(hungUp.status, .exited(0), hungUp.log)
        XCTAssertEqual(hungUp.output, "hung up \(id.prefix(8)) (\(number))\n")
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        awaitLine(runStopped, since: index)

        // deflect, with no call named: the one that rings leaves the modem unanswered.
        mark = try modem.mark()
        index = world.transcript.count
        try modem.ring("+15550002")
        awaitLine(ringing("B", "+15550002", live: 1), since: index)
        let deflected = try telwatchCommand(["deflect", "+15559876543"])
        XCTAssertEqual(deflected.status, .exited(0), deflected.log)
        XCTAssertTrue(deflected.output.hasSuffix(" (+15550002) to +15559876543\n"), deflected.output)
        try modem.awaitCommand("^AT\\+CTFR=(\\+15559876543|15559876543,145)$", since: mark)
        awaitLine(runStopped, since: index)

        // dial: its id on stdout, the call the stack follows, and hung up by that id.
        mark = try modem.mark()
        index = world.transcript.count
        let dialled = try telwatchCommand(["dial", "+15550123"])
        XCTAssertEqual(dialled.status, .exited(0), dialled.log)
        let newID = dialled.output.trimmingCharacters(in: .newlines)
        XCTAssertNotNil(UUID(uuidString: newID), dialled.output)
        try modem.awaitCommand("^ATD\\+15550123;$", since: mark)
        awaitLine(line("dialing", "C", detail: "dialing", dir: "outgoing", number: "+15550123", live: 1), since: index)
        XCTAssertEqual(world.callEvents("C").first?["call_id"] as? String, newID)
        awaitLine("acted dial C by=cli result=ok", since: index)
        mark = try modem.mark()
        let ended = try telwatchCommand(["hangup", newID])
        XCTAssertEqual(ended.status, .exited(0), ended.log)
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        awaitLine(runStopped, since: index)
        XCTAssertEqual(try modem.calls(), [])
    }

    /// `telwatch answer` on a call that waits beside a connected one: the connected call goes on
    /// hold (the stacks refuse their per-call answer for a waiting call).
    func answerWaitingFromTheCommandLine() throws {
        try startDaemonAndTelwatch()
        var index = world.transcript.count
        try modem.ring("+15551111")
        awaitLine(ringing("A", "+15551111", live: 1), since: index)
        XCTAssertEqual(try telwatchCommand(["answer"]).status, .exited(0))
        awaitLine(line("connected", "A", prev: "incoming", detail: "active", dir: "incoming", number: "+15551111", live: 1),
                  since: index)

        index = world.transcript.count
        try modem.waiting("+15552222")
        awaitLine(ringing("B", "+15552222", detail: "waiting", live: 2), since: index)
        let id = try XCTUnwrap(world.callEvents("B").first?["call_id"] as? String)
        let mark = try modem.mark()
        let answered = try telwatchCommand(["answer", id])
        XCTAssertEqual(answered.status, .exited(0), answered.log)
        XCTAssertEqual(answered.output, "answered \(id.prefix(8)) (+15552222)\n")
        try modem.awaitCommand("^AT\\+CHLD=2$", since: mark)
        awaitLine("acted answer B by=cli result=ok", since: index)
        awaitLine(line("connected", "A", prev: "connected", detail: "held", dir: "incoming", number: "+15551111", live: 2),
                  since: index)
        awaitLine(line("connected", "B", prev: "incoming", detail: "active", dir: "incoming", number: "+15552222", live: 2),
                  since: index)

        index = world.transcript.count
        try daemon.hangupAll()
        awaitLine(runStopped, since: index)
        XCTAssertEqual(try modem.calls(), [])
    }

    /// Every refusal in one line with its own exit status; the modem hears nothing of a refused
    /// number, an emergency number or a command hidden in one.
    func refusalsFromTheCommandLine() throws {
        try daemon.start()
        try assertRefused(["answer"], 3, saying: "answer: no telwatch service is running on the ")
        XCTAssertEqual(try world.startTelwatch(), ["backend appeared", "backend synced modems=1 calls=0", "ready"])
        let start = try modem.mark()

        try assertRefused(["answer"], 6, saying: "answer: no call rings (no call is live); name one: telwatch answer CALL")
        try assertRefused(["hangup", "ffff"], 6, saying: "hangup: no live call has the id 'ffff' (no call is live)")
        try assertRefused(["dial", "112"], 10, saying: "dial: refused: an emergency number is never dialled from afar")
        try assertRefused(["dial", "+1555;+CFUN=0"], 10, saying: "dial: refused: not a number to dial")
        try assertRefused(["dial", "+1555\u{1B}]0;owned\u{07}"], 10, saying: "dial: refused: not a number to dial")

        // Two calls ring: which one is meant must be said.
        var index = world.transcript.count
        try modem.ring("+15550011")
        awaitLine(ringing("A", "+15550011", live: 1), since: index)
        index = world.transcript.count
        try modem.waiting("+15550012")
        awaitLine(ringing("B", "+15550012", detail: "waiting", live: 2), since: index)
        let first = try XCTUnwrap(world.callEvents("A").first?["call_id"] as? String)
        let second = try XCTUnwrap(world.callEvents("B").first?["call_id"] as? String)
        try assertRefused(["answer"], 7, saying: "answer: 2 calls ring (\(first.prefix(8)), \(second.prefix(8))); "
                          + "name one: telwatch answer CALL")
        try assertRefused(["deflect", first, "911"], 10, saying: "deflect: refused: an emergency number")
        try assertRefused(["deflect", first, "+1555;+CFUN=0"], 10, saying: "deflect: refused: not a number to dial")
        try assertRefused(["tones", first, "1;+CFUN=0"], 10, saying: "tones: refused: not a number to dial")

        if kind == .modemManager {
            // ModemManager asks polkit before each act: refused, the stack's words and status 9.
            try world.bus.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                               "org.freedesktop.DBus.Mock", "AllowUnknown", [.bool(false)])
            try assertRefused(["hangup", first], 9, saying: "hangup: this user may not do that")
        }

        index = world.transcript.count
        try modem.remoteHangup()
        try modem.remoteHangup()
        awaitLine(runStopped, since: index)
        for pattern in ["CFUN=0", "^ATD", "CTFR", "VTS", "owned"] {
            XCTAssertNil(try modem.seen(pattern, since: start), "\(pattern): \(modem.dialogue)")
        }
    }
}
