import BGRunManager
import Glibc
import Loop
import Processes
import TestSupport
import XCTest

/// However many events arrive and however slow the hooks are, what waits and what runs stays bounded.
final class HookBoundsTests: RunTestCase {
    private func makeRunner(directory hookDirectory: String, timeout: Double = 10, coalesced: Set<String> = [],
                            maxRunning: Int = 16, maxQueued: Int = 1024) -> HookRunner {
        let settings = HookSettings(directory: hookDirectory, timeout: timeout, killGrace: 0.5, stdout: .null,
                                    stderr: .inherit, coalescedEvents: coalesced, maxRunning: maxRunning,
                                    maxQueued: maxQueued)
        let runner = HookRunner(loop: loop, settings: settings)
        runner.onOutcome = { [unowned self] outcome in self.record(outcome) }
        hooks = runner
        return runner
    }

    private var seen: [HookOutcome] = []
    private func record(_ outcome: HookOutcome) { seen.append(outcome) }

    private func waitForSeen(_ count: Int, timeout: Double = 15, file: StaticString = #filePath, line: UInt = #line) {
        waitFor("\(count) hook outcomes (have \(seen.count))", timeout: timeout, file: file, line: line) {
            self.seen.count >= count
        }
    }

    func testOnlyTheNewestWaitingUpdateOfAKeyRunsBehindASlowHook() throws {
        try startHarness(logind: false)
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/incoming", "exec sleep 30")
        try Files.script(hookDirectory + "/updated", "env -0 > '\(directory)/updated.env'")
        let runner = makeRunner(directory: hookDirectory, timeout: 0.4, coalesced: ["updated"])

        XCTAssertEqual(runner.run(event: "incoming", key: "call", variables: []), 1)
        for sequence in 1...30_000 {
            runner.run(event: "updated", key: "call", variables: [("TELWATCH_SEQUENCE", String(sequence))])
        }
        XCTAssertEqual(runner.queuedCount, 1, "one update waits, not thirty thousand")
        XCTAssertEqual(runner.coalescedCount, 29_999)

        waitForSeen(2)
        XCTAssertEqual(seen.map(\.event), ["incoming", "updated"])
        XCTAssertEqual(seen.last?.result, .exited(0))
        XCTAssertEqual(Files.environmentDump(directory + "/updated.env")?["TELWATCH_SEQUENCE"], "30000",
                       "the update that ran is the newest")
        waitFor("the runner to be idle") { runner.isIdle }
    }

    func testNoMoreThanTheCapRunAtOnceAndEveryKeyGetsItsTurn() throws {
        try startHarness(logind: false)
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/incoming", "exec sleep 30")
        let runner = makeRunner(directory: hookDirectory, timeout: 0.3, maxRunning: 3)

        for call in 0..<10 { runner.run(event: "incoming", key: "call-\(call)", variables: []) }
        XCTAssertEqual(runner.runningCount, 3)
        XCTAssertEqual(runner.queuedCount, 7)

        waitForSeen(10)
        XCTAssertEqual(runner.peakRunning, 3, "never more than the cap at once")
        XCTAssertEqual(Set(seen.map(\.key)).count, 10, "every call's hook ran")
        XCTAssertTrue(seen.allSatisfy { $0.result == .timedOut(.signaled(SIGTERM)) }, "\(seen.map(\.result))")
        XCTAssertFalse(seen.compactMap(\.pid).contains { ProcessTable.isAlive($0) })
    }

    func testPastTheQueueBoundANewHookIsDroppedAndSaidSo() throws {
        try startHarness(logind: false)
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/incoming", "exec sleep 30")
        let runner = makeRunner(directory: hookDirectory, timeout: 0.3, maxRunning: 1, maxQueued: 2)

        for call in 0..<5 { runner.run(event: "incoming", key: "call-\(call)", variables: []) }
        XCTAssertEqual(runner.runningCount, 1)
        XCTAssertEqual(runner.queuedCount, 2)
        XCTAssertEqual(seen.map(\.result), [.dropped(waiting: 2), .dropped(waiting: 2)], "two dropped, at once")
        XCTAssertEqual(seen.map(\.key), ["call-3", "call-4"])

        waitForSeen(5)
        XCTAssertEqual(seen.dropFirst(2).map(\.key), ["call-0", "call-1", "call-2"], "the rest ran in order")
    }

    func testTheDefaultCapLeavesDescriptorsForTheLockTheRecordAndTheBus() {
        XCTAssertEqual(HookSettings.defaultMaxRunning(), HookSettings.defaultMaxRunning(reserve: 32, perHook: 4))
        var limit = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        let saved = limit
        defer { var restore = saved; setrlimit(Int32(RLIMIT_NOFILE.rawValue), &restore) }
        limit.rlim_cur = 64
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        XCTAssertEqual(HookSettings.defaultMaxRunning(), 8, "(64 - 32 reserved) / 4 per hook")
        limit.rlim_cur = 20
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit), 0)
        XCTAssertEqual(HookSettings.defaultMaxRunning(), 1, "at least one hook can always run")
    }
}
