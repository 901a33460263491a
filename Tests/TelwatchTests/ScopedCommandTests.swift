import CallMonitor
import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// `while.SCOPE` commands in the real telwatch against the fake ModemManager: started by the
/// ring, stopped by the answer, and never left behind, however telwatch ends or is reconfigured.
/// Commands and hooks report through a FIFO, so the test wakes when they write.
final class ScopedCommandTests: CommandTestCase {
    private var record = ""
    private var reader: LineReader!
    private var readerFD: Int32 = -1
    /// Held open by the test so that the FIFO never reads as ended between two writers.
    private var keeperFD: Int32 = -1

    override func setUpWithError() throws {
        try super.setUpWithError()
        record = logind.directory + "/record"
        XCTAssertEqual(mkfifo(record, 0o600), 0)
        readerFD = open(record, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        keeperFD = open(record, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        reader = LineReader(fd: readerFD)
    }

    override func tearDown() {
        if keeperFD >= 0 { close(keeperFD) }
        if readerFD >= 0 { close(readerFD) }
        super.tearDown()
    }

    /// A command that writes `start SCOPE NUMBER PID` and, on SIGTERM, `stop SCOPE PID`.
    private func ringer() throws -> String {
        let path = logind.directory + "/ringer"
        try Files.script(path, """
        trap 'echo "stop $TELWATCH_SCOPE $$" >> "\(record)"; exit 0' TERM
        echo "start $TELWATCH_SCOPE $TELWATCH_NUMBER $$" >> "\(record)"
        while :; do sleep 60 & wait $!; done
        """)
        return path
    }

    private func next(_ prefix: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let deadline = monotonicNow() + 10
        while case .line(let text) = reader.next(timeout: max(0, deadline - monotonicNow())) {
            if text.hasPrefix(prefix) { return text.split(separator: " ").map(String.init) }
        }
        XCTFail("no \(prefix)… in the record", file: file, line: line)
        return ["", "", "", ""]
    }

    /// telwatch with one `--while SCOPE=COMMAND`, and a ring from `number`: telwatch and the pid
    /// the command wrote on its line starting with `started`.
    private func watch(_ scope: String, _ command: String, ring number: String,
                       started: String) throws -> (TestProcess, pid_t) {
        try startModemManager()
        let watch = try startWatch(["--while", scope + "=" + command])
        _ = try ring(number)
        return (watch, try XCTUnwrap(pid_t(next(started).last ?? "")))
    }

    private func config(_ text: String) throws -> String {
        let path = logind.directory + "/telwatch.conf"
        try Files.write(path, text)
        return path
    }

    func testTheRingStopsOnAnswerAndTheConnectedHookDoesNotWaitForIt() throws {
        try startModemManager()
        let ringer = try ringer()
        // The hook's argument is quoted as in sh: one word, spaces and all.
        let watch = try startWatch(["--config", try config("""
        while.ringing = \(ringer)
        hook.connected = /bin/sh -c "echo 'connected hook' >> \(record)"
        """)])
        let call = try ring("+15550101")
        let started = next("start ringing")
        XCTAssertEqual(started[2], "+15550101")
        let ringPID = try XCTUnwrap(pid_t(started[3]))
        try setState(call, .active, reason: .accepted)
        XCTAssertNotNil(nextEvent(watch, "connected"))
        var seen: Set<String> = []
        while seen.count < 2, case .line(let text) = reader.next(timeout: 10) { seen.insert(text) }
        XCTAssertEqual(seen, ["stop ringing \(ringPID)", "connected hook"], "the ring stopped, the hook ran at once")
        XCTAssertTrue(ProcessTable.waitForEnd(ringPID, timeout: 10), "the ring is gone")
        watch.terminate()
    }

    func testAKilledTelwatchLeavesNoRingBehind() throws {
        let (watch, ringPID) = try watch("ringing", try ringer(), ring: "+15550102", started: "start ringing")
        watch.signal(SIGKILL)
        _ = watch.wait(timeout: 10)
        XCTAssertEqual(next("stop ringing"), ["stop", "ringing", String(ringPID)], "the kernel's SIGTERM reached it")
        XCTAssertTrue(ProcessTable.waitForEnd(ringPID, timeout: 10))
    }

    func testACommandDeafToSIGTERMStillSeesItsStdinEndWhenTelwatchIsKilled() throws {
        let deaf = logind.directory + "/deaf"
        // A ring that reads its stdin (as `fbcli` does) and ignores the kernel's SIGTERM.
        try Files.script(deaf, """
        trap '' TERM
        echo "start $$" >> "\(record)"
        cat
        echo "stdin ended" >> "\(record)"
        """)
        let (watch, pid) = try watch("ringing", deaf, ring: "+15550105", started: "start")
        watch.signal(SIGKILL)
        _ = watch.wait(timeout: 10)
        XCTAssertEqual(next("stdin ended"), ["stdin", "ended"])
        XCTAssertTrue(ProcessTable.waitForEnd(pid, timeout: 10))
    }

    func testStoppingTelwatchStopsTheCommandFirst() throws {
        let (watch, pid) = try watch("live", try ringer(), ring: "+15550103", started: "start live")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0))
        XCTAssertEqual(next("stop live"), ["stop", "live", String(pid)])
        XCTAssertFalse(ProcessTable.isAlive(pid))
    }

    func testAtStopTheRingEndsWithoutWaitingForTheRunsHooks() throws {
        try startModemManager()
        // A run-stopped hook that blocks until the test lets it go.
        let gate = logind.directory + "/gate"
        XCTAssertEqual(mkfifo(gate, 0o600), 0)
        // Open both ways (Linux allows it on a FIFO): the hook's open never blocks, its read does
        // until the test writes, and nothing here can hang.
        let release = open(gate, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        defer { close(release) }
        let watch = try startWatch(["--while", "live=" + (try ringer()), "--config", try config(
            "hook.run-stopped = /bin/sh -c 'echo hook-waits >> \(record); read x < \(gate)'\n")])
        _ = try ring("+15550106")
        let pid = try XCTUnwrap(pid_t(next("start live").last ?? ""))
        watch.signal(SIGTERM)
        var seen: Set<String> = []
        while seen.count < 2, case .line(let text) = reader.next(timeout: 10) { seen.insert(text) }
        XCTAssertEqual(seen, ["hook-waits", "stop live \(pid)"], "the ring stopped while the hook still waited")
        XCTAssertEqual(write(release, "go\n", 3), 3)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0))
    }

    func testAReloadThatDropsTheCommandStopsItAndOneThatAddsItStartsIt() throws {
        try startModemManager()
        let ringer = try ringer()
        let path = try config("while.ringing = \(ringer)\n")
        let watch = try startWatch(["--config", path])
        _ = try ring("+15550104")
        let pid = try XCTUnwrap(pid_t(next("start ringing").last ?? ""))
        try Files.write(path, "while.live = \(ringer)\n")
        watch.signal(SIGHUP)
        // The old command is told to stop before the new one starts, but which of the two writes
        // its line first is the scheduler's choice: both lines, in either order.
        var seen: [String: [String]] = [:]
        while seen.count < 2, case .line(let text) = reader.next(timeout: 10) {
            let words = text.split(separator: " ").map(String.init)
            if text.hasPrefix("stop ringing") || text.hasPrefix("start live") { seen[words[0]] = words }
        }
        XCTAssertEqual(seen["stop"], ["stop", "ringing", String(pid)])
        XCTAssertEqual(seen["start"]?[2], "+15550104", "the live call is described")
        XCTAssertTrue(ProcessTable.waitForEnd(pid, timeout: 10))
        watch.terminate()
    }
}
