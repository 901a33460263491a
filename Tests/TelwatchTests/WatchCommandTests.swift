import DBus
import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

final class WatchCommandTests: CommandTestCase {
    static let schema = ["event", "time", "call_id", "backend", "modem", "path", "state", "previous", "detail",
                         "direction", "number", "name", "reason", "multiparty", "initial", "missed", "first_seen",
                         "connected_at", "ended_at", "duration", "live_calls"]

    func testJSONLinesForAFullCallLifeArriveOneByOne() throws {
        try startModemManager()
        let watch = try startWatch()
        let call = try ring("+15551234")
        // ModemManager announces a call on CallAdded: the run starts before its state is read.
        let started = try XCTUnwrap(nextEvent(watch, "run-started"))
        XCTAssertEqual(started["reason"] as? String, "new-call")
        // The line is read while telwatch keeps running: it was written (and flushed) at once.
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"))
        XCTAssertTrue(watch.isRunning)
        for key in Self.schema { XCTAssertTrue(incoming.keys.contains(key), "missing \(key) in \(incoming)") }
        XCTAssertEqual(incoming["state"] as? String, "incoming")
        XCTAssertEqual(incoming["detail"] as? String, "ringing")
        XCTAssertEqual(incoming["direction"] as? String, "incoming")
        XCTAssertEqual(incoming["number"] as? String, "+15551234")
        XCTAssertEqual(incoming["path"] as? String, call)
        XCTAssertEqual(incoming["live_calls"] as? Int, 1)
        XCTAssertTrue(incoming["previous"] is NSNull)
        let id = try XCTUnwrap(incoming["call_id"] as? String)
        XCTAssertNotNil(UUID(uuidString: id))
        XCTAssertEqual(started["holder"] as? String, id, "the call holds the run from its announcement on")

        try mm(call, "org.freedesktop.ModemManager1.Call", "Accept")
        let connected = try XCTUnwrap(nextEvent(watch, "connected"))
        XCTAssertEqual(connected["call_id"] as? String, id)
        XCTAssertEqual(connected["previous"] as? String, "incoming")
        XCTAssertEqual(connected["detail"] as? String, "active")

        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        let ended = try XCTUnwrap(nextEvent(watch, "disconnected"))
        XCTAssertEqual(ended["call_id"] as? String, id)
        XCTAssertEqual(ended["missed"] as? Bool, false)
        XCTAssertEqual(ended["reason"] as? String, "terminated")
        XCTAssertEqual(ended["live_calls"] as? Int, 0)
        XCTAssertNotNil(ended["duration"] as? Double)
        let stopped = try XCTUnwrap(nextEvent(watch, "run-stopped"))
        XCTAssertEqual(stopped["reason"] as? String, "idle")

        watch.signal(SIGTERM)
        XCTAssertNotNil(nextEvent(watch, "exit"), "a final line with the signal count")
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    func testTextOutputEscapesAHostileCallerID() throws {
        try startModemManager()
        let watch = try telwatch(["--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory])
        XCTAssertNotNil(watch.readLine(timeout: 15) { $0.contains("synced") }, watch.log())
        _ = try ring("+1555\u{1B}[2J\n$(id)")
        XCTAssertNotNil(watch.readLine(timeout: 10) { $0.contains("run-started") }, "the run starts on CallAdded")
        let line = try XCTUnwrap(watch.readLine(timeout: 10) { $0.contains("incoming") }, watch.log())
        XCTAssertFalse(line.contains("\u{1B}"), "no raw escape reaches the terminal: \(line)")
        XCTAssertTrue(line.contains("+1555\\e[2J\\n$(id)"), line)
        XCTAssertTrue(line.contains("ringing"), line)
        XCTAssertTrue(line.contains("in "), line)
        watch.signal(SIGINT)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    func testJSONKeepsAHostileCallerIDExactAndRedactionHidesIt() throws {
        try startModemManager()
        let hostile = "'; rm -rf ~ #\u{1B}[31m\n\"x\""
        let watch = try startWatch()
        let redacted = try startWatch(["--redact-numbers", "--inhibit", "none", "--state-dir", stateDirectory + "2",
                                       "--no-api"])
        _ = try ring(hostile)
        XCTAssertEqual(nextEvent(watch, "incoming")?["number"] as? String, hostile)
        let hidden = try XCTUnwrap(nextEvent(redacted, "incoming")?["number"] as? String)
        XCTAssertEqual(hidden.count, hostile.count)
        XCTAssertTrue(hidden.hasPrefix("****"))
        XCTAssertFalse(hidden.contains("rm"))
    }

    func testSIGTERMMidCallReleasesTheLockAndExitsZero() throws {
        try startModemManager()
        let watch = try startWatch()
        _ = try ring("+15550001")
        XCTAssertNotNil(nextEvent(watch, "lock-taken"))
        XCTAssertNotNil(logind.waitForInhibitors { $0.contains { $0.who == "telwatch" } }, "the lock is held mid-call")
        watch.signal(SIGTERM)
        let stopped = try XCTUnwrap(nextEvent(watch, "run-stopped"))
        XCTAssertEqual(stopped["reason"] as? String, "shutdown")
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0))
        XCTAssertNotNil(logind.waitForInhibitors { !$0.contains { $0.who == "telwatch" } }, "the lock is released")
    }

    func testLosingTheBusExitsWithStatusThree() throws {
        try startModemManager()
        let watch = try startWatch()
        _ = try ring("+15550002")
        XCTAssertNotNil(nextEvent(watch, "run-started"))
        kill(try XCTUnwrap(fixture.daemonPID), SIGKILL)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(3))
        XCTAssertTrue(watch.log().contains("lost the"), watch.log())
    }

    func testBadUsageIsOneLineAndStatusTwo() throws {
        for arguments in [["--bogus"], ["--config", logind.directory + "/missing.conf"], ["--backend", "isdn"],
                          ["--lease", "soon"], ["--lease", "1e300"], ["--heartbeat", "nan"], ["--inhibit", "everything"], ["status", "--what"]] {
            let result = try runToEnd(arguments)
            XCTAssertEqual(result.status, .exited(2), "\(arguments): \(result.errors)")
            let lines = result.errors.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "\(arguments): \(result.errors)")
            XCTAssertTrue(lines.first?.hasPrefix("telwatch: ") == true, result.errors)
            XCTAssertEqual(result.output, "")
        }
    }

    func testConfigFileSettingsAndFlagsWin() throws {
        try startModemManager()
        let config = logind.directory + "/telwatch.conf"
        try "# settings\nbackend = modemmanager\njson = true\ninhibit = sleep:idle:delay\nlease = 1h\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let watch = try telwatch(["--config", config, "--bus", fixture.address, "--inhibit", "sleep:block",
                                  "--state-dir", stateDirectory])
        XCTAssertNotNil(nextEvent(watch, "ready", timeout: 15), watch.log())
        _ = try ring("+15550003")
        let lock = try XCTUnwrap(nextEvent(watch, "lock-taken"))
        XCTAssertEqual(lock["what"] as? String, "sleep", "the flag overrides the file")
        XCTAssertEqual(lock["mode"] as? String, "block")
    }

    func testHooksGetTheEventAndRunOutsideTheEventStream() throws {
        try startModemManager()
        let (hooks, reader) = try recordingHook("incoming", printing: "$TELWATCH_EVENT|$TELWATCH_NUMBER|$TELWATCH_STATE",
                                                more: "echo hook-output\n")
        defer { close(reader) }
        let watch = try startWatch(["--hooks", hooks])
        _ = try ring("+15550004")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertEqual(LineReader(fd: reader).next(timeout: 10), .line("incoming|+15550004|incoming"))
        watch.signal(SIGTERM)
        let rest = watch.readToEnd(timeout: 10)
        XCTAssertFalse(rest.contains("hook-output"), "hook output goes to stderr, never into the event stream")
        for line in rest.split(separator: "\n") { XCTAssertNotNil(JSONLine.object(String(line)), String(line)) }
    }
}
