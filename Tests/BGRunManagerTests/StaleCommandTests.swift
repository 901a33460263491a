import BGRunManager
import Glibc
import Loop
import TestSupport
import XCTest

/// A run command never outlives the telwatch that started it for long: the kernel signals it the
/// moment telwatch dies (armed before the command starts), and one that ignores that signal is
/// stopped by the next start, which finds it in the run record.
final class StaleCommandTests: RunTestCase {
    private var probePath: String { BuildProducts.path("telwatch-run-probe") }

    /// Starts the probe and returns it with its run command's pid once it holds its lock (its
    /// `lock-taken` comes after the turn in which the run, command included, was recorded).
    private func startProbe(stubborn: Bool) throws -> (TestProcess, pid_t) {
        let ready = harness.fixture.directory + "/stubborn-ready"
        let probe = try harness.fixture.start([probePath, stateDirectory],
                                              extraEnvironment: stubborn ? ["PROBE_STUBBORN=1", "PROBE_READY=" + ready] : [],
                                              name: "run-probe")
        var lines: [String] = []
        XCTAssertNotNil(probe.readLine(timeout: 10, where: { $0.hasPrefix("lock-taken") }) { lines.append($0) },
                        "the probe never held its lock: \(lines) \(probe.log())")
        let line = try XCTUnwrap(lines.first { $0.hasPrefix("run-command-started") }, "\(lines)")
        let pid = try XCTUnwrap(line.split(separator: " ").first { $0.hasPrefix("pid=") }.flatMap { pid_t($0.dropFirst(4)) })
        // Its trap must be set before its parent dies, or the death signal ends it (a loaded machine
        // can kill the probe before the shell has read its first word).
        if stubborn {
            XCTAssertTrue(Files.waitUntil(ready, timeout: 10) { Files.exists(ready) }, "the stubborn command never set its trap")
        }
        return (probe, pid)
    }

    func testACommandThatIgnoresItsParentsDeathIsStoppedByTheNextStart() throws {
        try startHarness()
        guard access(probePath, X_OK) == 0 else { return XCTFail("\(probePath) is not built") }
        let (probe, commandPID) = try startProbe(stubborn: true)
        // It ignores SIGTERM: whatever happens below, it must not outlive the test.
        let command = ProcessIdentity.of(commandPID)
        defer { if let command, command.isRunning { kill(-command.pid, SIGKILL) } }
        let recorded = try XCTUnwrap(RunStateStore.read(directory: stateDirectory)?.command)
        XCTAssertEqual(recorded.pid, commandPID, "the record knows the command")
        XCTAssertEqual(recorded, ProcessIdentity.of(commandPID))

        kill(probe.pid, SIGKILL)
        XCTAssertEqual(probe.wait(timeout: 5), .signaled(SIGKILL))
        XCTAssertFalse(ProcessTable.waitForEnd(commandPID, timeout: 0.5), "it ignored the SIGTERM")

        let began = monotonicNow()
        _ = try makeManager { $0.commandGrace = 0.3 }
        XCTAssertTrue(events.contains { $0.kind == .staleCommandStopped(pid: commandPID) }, "\(names())")
        // The SIGKILL comes from a timer of the loop, after the grace.
        XCTAssertTrue(ProcessTable.runLoop(loop, untilEndOf: commandPID, timeout: 10), "the command was never stopped")
        XCTAssertGreaterThanOrEqual(monotonicNow() - began, 0.29, "it was given its grace")
    }

    func testARecycledPidIsNeverSignalled() throws {
        try startHarness()
        try Files.makeDirectory(stateDirectory)
        // A record naming this very test process as its command, with another start time: a pid
        // that was reused since. Recovery must leave it alone (the test would die otherwise).
        let me = try XCTUnwrap(ProcessIdentity.of(getpid()))
        let record = RunRecord(runID: "00000000000000aa", reason: "incoming", pid: 999_999, startedAt: 1_700_000_000,
                               updatedAt: 1_700_000_000, holders: 1, lease: nil, leaseExpiresAt: nil, lock: .held,
                               wakelock: nil, command: ProcessIdentity(pid: me.pid, startTime: me.startTime + 1))
        try Files.write(stateDirectory + "/" + RunStateStore.recordName, record.encoded)
        _ = try makeManager()
        XCTAssertTrue(events.contains { $0.kind.isStale })
        XCTAssertFalse(events.contains { if case .staleCommandStopped = $0.kind { return true }; return false })
    }

    func testACommandNeverOutlivesATelwatchKilledRightAfterTheSpawn() throws {
        try startHarness()
        guard access(probePath, X_OK) == 0 else { return XCTFail("\(probePath) is not built") }
        for round in 1...200 {
            let marker = "0.000\(getpid())\(round)"
            let probe = try harness.fixture.start([probePath, stateDirectory],
                                                  extraEnvironment: ["PROBE_MARKER=" + marker], name: "run-probe")
            // Killed as the run starts: before, during or just after the command's spawn.
            XCTAssertNotNil(probe.readLine(timeout: 10, where: { $0.hasPrefix("run-started") }) { _ in },
                            "round \(round): the probe never started a run: \(probe.log())")
            kill(probe.pid, SIGKILL)
            XCTAssertEqual(probe.wait(timeout: 5), .signaled(SIGKILL))
            for pid in processes(withArgument: marker) where !ProcessTable.waitForEnd(pid, timeout: 5) {
                kill(-pid, SIGKILL)
                return XCTFail("round \(round): the run command \(pid) outlived its telwatch")
            }
            XCTAssertNotNil(harness.waitForInhibitors { $0.isEmpty })
            unlink(stateDirectory + "/" + RunStateStore.recordName)
        }
    }

    /// Live processes whose command line has `argument` as one of its words.
    private func processes(withArgument argument: String) -> [pid_t] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var found: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard let pid = pid_t(name), let bytes = try? SmallFile.read("/proc/\(name)/cmdline", limit: 1 << 16) else {
                continue
            }
            let words = bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if words.contains(argument) && ProcessTable.isAlive(pid) { found.append(pid) }
        }
        return found
    }
}
