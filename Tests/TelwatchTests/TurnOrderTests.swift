import Glibc
import Loop
import TestSupport
import XCTest

/// The order of a turn's I/O as the kernel sees it (strace): the ring's line is written to
/// stdout before the call history's transaction touches the disk (docs/ARCHITECTURE.md, "A turn").
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
}
