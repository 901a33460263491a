import DBus
import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// One call, one id, everywhere, across a restart of telwatch and across its SIGKILL: the event
/// stream, the hooks' environment, the D-Bus API (`status`), and the history (`telwatch log`)
/// know a call that outlives its telwatch by the id, first sight and answer it had.
final class CallIdentityTests: CommandTestCase {
    static let call = "org.freedesktop.ModemManager1.Call"

    var status: [String] { ["status", "--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory] }

    /// Returns once the daemon has finished the turns before this one (a SIGUSR1 is read only
    /// after the loop waited, so after the earlier turns' persist phase).
    func settled(_ watch: TestProcess, file: StaticString = #filePath, line: UInt = #line) {
        watch.signal(SIGUSR1)
        XCTAssertNotNil(nextEvent(watch, "stats"), "no stats line", file: file, line: line)
    }

    /// The call of `status --json`, and its text line.
    func statusOfTheCall() throws -> (json: [String: Any], text: String) {
        let json = try runToEnd(status + ["--json"])
        XCTAssertEqual(json.status, .exited(0), json.errors)
        let object = try XCTUnwrap(JSONLine.object(json.output.trimmingCharacters(in: .whitespacesAndNewlines)), json.output)
        let calls = try XCTUnwrap(object["calls"] as? [[String: Any]], json.output)
        XCTAssertEqual(calls.count, 1, json.output)
        let text = try runToEnd(status)
        let line = text.output.split(separator: "\n").first { $0.contains(" connected (") }
        return (try XCTUnwrap(calls.first), String(try XCTUnwrap(line, text.output)))
    }

    /// The seconds of a status line's "for 7.7 s".
    func seconds(_ line: String) -> Double? {
        guard let range = line.range(of: "for ") else { return nil }
        let words = line[range.upperBound...].split(separator: " ")
        guard words.count >= 2, words[1] == "s" else { return words.count >= 2 && words[1] == "min" ? 60 : nil }
        return Double(words[0])
    }

    func testACallLiveAcrossASIGKILLAndARestartKeepsItsIDAndAnswerEverywhere() throws {
        try startModemManager()
        let (hooks, reader) = try recordingHook(
            "connected", printing: "$TELWATCH_CALL_ID|$TELWATCH_CONNECTED_AT|$TELWATCH_INITIAL")
        defer { close(reader) }
        // Held open, so that the first hook's end is no end of the FIFO for the second's line.
        let keeper = open(logind.directory + "/hook-record", O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(keeper, 0)
        defer { close(keeper) }
        let hookLines = LineReader(fd: reader)
        let first = try startWatch(["--hooks", hooks, "--inhibit", "none"])
        let call = try ring("+15550071")
        let ringing = try XCTUnwrap(nextEvent(first, "incoming"), first.log())
        try mm(call, Self.call, "Accept")
        let answered = try XCTUnwrap(nextEvent(first, "connected"), first.log())
        let id = try XCTUnwrap(answered["call_id"] as? String)
        XCTAssertEqual(ringing["call_id"] as? String, id)
        let connectedAt = try XCTUnwrap(answered["connected_at"] as? String)
        let firstSeen = try XCTUnwrap(answered["first_seen"] as? String)
        guard case .line(let firstHook) = hookLines.next(timeout: 10) else { return XCTFail("no hook ran: \(first.log())") }
        XCTAssertTrue(firstHook.hasPrefix(id + "|"), firstHook)
        XCTAssertTrue(firstHook.hasSuffix("|false"), firstHook)
        let answeredAt = wallClockNow()
        settled(first)
        first.signal(SIGKILL)
        XCTAssertEqual(first.wait(timeout: 10), .signaled(SIGKILL))

        // No telwatch runs: status reads the stack, and the record the killed one left.
        let alone = try statusOfTheCall()
        XCTAssertEqual(alone.json["call_id"] as? String, id, "\(alone.json)")
        XCTAssertEqual(alone.json["connected_at"] as? String, connectedAt)
        XCTAssertTrue(alone.text.hasPrefix("  \(id.prefix(8))  connected"), alone.text)

        // Long enough for a duration to show whole seconds, not "0.0 s".
        let atLeast = 1.5
        if wallClockNow() - answeredAt < atLeast { usleep(useconds_t((atLeast - (wallClockNow() - answeredAt)) * 1e6)) }

        // Its first lines (the call found live) come before `ready`.
        let second = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager", "--state-dir",
                                   stateDirectory, "--hooks", hooks, "--inhibit", "none"])
        let found = try XCTUnwrap(nextEvent(second, "connected", timeout: 15), second.log())
        XCTAssertEqual(found["call_id"] as? String, id, "the events keep the id: \(found)")
        XCTAssertEqual(found["initial"] as? Bool, true, "live when this telwatch started")
        XCTAssertEqual(found["connected_at"] as? String, connectedAt, "answered when it was")
        XCTAssertEqual(found["first_seen"] as? String, firstSeen)
        guard case .line(let secondHook) = hookLines.next(timeout: 10) else { return XCTFail("no hook ran: \(second.log())") }
        XCTAssertEqual(secondHook, firstHook.replacingOccurrences(of: "|false", with: "|true"),
                       "the hooks see the same TELWATCH_CALL_ID and TELWATCH_CONNECTED_AT")

        // The service's API (status asks it) knows the call by its id, answered when it was.
        let asked = try statusOfTheCall()
        XCTAssertEqual(asked.json["call_id"] as? String, id, "\(asked.json)")
        XCTAssertEqual(asked.json["connected_at"] as? String, connectedAt)
        let shown = try XCTUnwrap(seconds(asked.text), asked.text)
        XCTAssertGreaterThanOrEqual(shown, atLeast - 0.1, "status counts from the real answer: \(asked.text)")

        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        let ended = try XCTUnwrap(nextEvent(second, "disconnected"), second.log())
        XCTAssertEqual(ended["call_id"] as? String, id)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(ended["duration"] as? Double), atLeast, "talk time from the real answer")
        settled(second)

        let log = try runToEnd(["log", "--json", "--state-dir", stateDirectory])
        XCTAssertEqual(log.status, .exited(0), log.errors)
        let rows = log.output.split(separator: "\n").compactMap { JSONLine.object(String($0)) }
        XCTAssertEqual(rows.count, 1, "one call, one row: \(log.output)")
        XCTAssertEqual(rows.first?["call_id"] as? String, id)
        XCTAssertEqual(rows.first?["connected_at"] as? String, connectedAt)
        XCTAssertEqual(rows.first?["initial"] as? Bool, false, "first seen ringing by the first telwatch")
        second.signal(SIGTERM)
        XCTAssertEqual(second.wait(timeout: 15), .exited(0), second.log())
    }

    func testACallThatEndedWhileNoTelwatchRanIsForgottenByTheNextStart() throws {
        try startModemManager()
        let first = try startWatch(["--inhibit", "none"])
        let call = try ring("+15550072")
        let ringing = try XCTUnwrap(nextEvent(first, "incoming"), first.log())
        let id = try XCTUnwrap(ringing["call_id"] as? String)
        settled(first)
        first.signal(SIGKILL)
        XCTAssertEqual(first.wait(timeout: 10), .signaled(SIGKILL))
        let record = stateDirectory + "/live-calls"
        XCTAssertTrue(try XCTUnwrap(Files.text(record)).contains("0.id=\(id)\n"), "the killed telwatch left it")
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])

        // The stack still lists it, terminated: history, no event; and the record lets it go, so
        // that no later call on its path can be taken for it.
        let second = try startWatch(["--inhibit", "none"])
        settled(second)
        // Emptied, or removed when this telwatch had not opened it yet: no call either way.
        XCTAssertFalse((Files.text(record) ?? "").contains(id), "forgotten once the start's sync is done")
        second.signal(SIGTERM)
        let rest = second.readToEnd(timeout: 15)
        XCTAssertEqual(second.wait(timeout: 15), .exited(0), second.log())
        XCTAssertFalse(rest.contains(id), "no event of the ended call: \(rest)")
    }
}
