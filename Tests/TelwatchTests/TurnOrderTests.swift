import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// The order of a turn's I/O as the kernel sees it (strace): the ring's line is written to
/// stdout before the call history's transaction touches the disk (docs/ARCHITECTURE.md, "A turn"),
/// and the live calls' record costs a call one small write per change of what it records.
final class TurnOrderTests: CommandTestCase {
    func testTheRingsLineIsWrittenBeforeItsHistoryCommit() throws {
        guard access("/usr/bin/strace", X_OK) == 0 else { throw XCTSkip("strace is not installed") }
        try startModemManager()
        let trace = logind.directory + "/strace.log"
        let watch = try fixture.start(["strace", "-y", "-e", "trace=write,pwrite64,epoll_wait", "-o", trace,
                                       Self.telwatch, "--bus", fixture.address, "--json", "--backend", "modemmanager",
                                       "--state-dir", stateDirectory], name: "telwatch")
        XCTAssertNotNil(nextEvent(watch, "ready", timeout: 30), watch.log())
        _ = try ring("+15550100")
        XCTAssertNotNil(nextEvent(watch, "incoming"), watch.log())
        watch.terminate()

        // The ring's turn: from the wait before the incoming line to the wait after it.
        let calls = try XCTUnwrap(Files.text(trace)).split(separator: "\n")
        let line = try XCTUnwrap(calls.firstIndex { $0.hasPrefix("write(1") && $0.contains(#"\"event\":\"incoming\""#) },
                                 "no incoming line in the trace")
        let start = calls[..<line].lastIndex { $0.hasPrefix("epoll_wait(") } ?? calls.startIndex
        let end = calls[line...].firstIndex { $0.hasPrefix("epoll_wait(") } ?? calls.endIndex
        let history = calls[start..<end].indices.filter { calls[$0].hasPrefix("pwrite64(") && calls[$0].contains("history.db") }
        XCTAssertFalse(history.isEmpty, "the history commits in the ring's turn:\n" + calls[start..<end].joined(separator: "\n"))
        XCTAssertTrue(history.allSatisfy { $0 > line },
                      "a history write came before the ring's line:\n" + calls[start..<end].joined(separator: "\n"))
    }

    func testTheLiveCallsRecordIsWrittenAfterTheLineAndOnlyWhenTheCallsChange() throws {
        guard access("/usr/bin/strace", X_OK) == 0 else { throw XCTSkip("strace is not installed") }
        try startModemManager()
        let trace = logind.directory + "/strace.log"
        let watch = try fixture.start(["strace", "-y", "-e", "trace=write,pwrite64,ftruncate,epoll_wait", "-o", trace,
                                       Self.telwatch, "--bus", fixture.address, "--json", "--backend", "modemmanager",
                                       "--state-dir", stateDirectory, "--no-history"], name: "telwatch")
        XCTAssertNotNil(nextEvent(watch, "ready", timeout: 30), watch.log())
        let call = try ring("+15550101")
        XCTAssertNotNil(nextEvent(watch, "incoming"), watch.log())
        try mm(call, "org.freedesktop.ModemManager1.Call", "Accept")
        XCTAssertNotNil(nextEvent(watch, "connected"), watch.log())
        // Held and back: the record says the same (a connected call), nothing is written.
        try setState(call, .held, reason: .accepted)
        XCTAssertNotNil(nextEvent(watch, "connected"), watch.log())
        try setState(call, .active, reason: .accepted)
        XCTAssertNotNil(nextEvent(watch, "connected"), watch.log())
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        XCTAssertNotNil(nextEvent(watch, "run-stopped"), watch.log())
        watch.terminate()

        let calls = try XCTUnwrap(Files.text(trace)).split(separator: "\n").map(String.init)
        let record = calls.indices.filter { calls[$0].contains("/live-calls>") }
        XCTAssertEqual(record.map { calls[$0].prefix { $0 != "(" } }, ["pwrite64", "pwrite64", "pwrite64"],
                       "the ring, the answer, the end (blanked in place), with or without the history:\n" + record.map { calls[$0] }.joined(separator: "\n"))
        let line = try XCTUnwrap(calls.firstIndex { $0.hasPrefix("write(1") && $0.contains(#"\"event\":\"incoming\""#) })
        XCTAssertGreaterThan(try XCTUnwrap(record.first), line, "the ring's line first")
    }
}
