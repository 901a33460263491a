import BGRunManager
import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// `SleepWatcher`, `SleepCoordinator` and the sleep record, against python3-dbusmock's own logind
/// on a private bus: the mock announces sleeps and resumes with `PrepareForSleep(b)` through its
/// `EmitSignal` (`LogindHarness.prepareForSleep`), and its `ListInhibitors` shows the locks.
final class SleepTests: RunTestCase {
    private var sleepEvents: [SleepEvent] = []
    private var resumes = 0
    private var coordinator: SleepCoordinator?
    private var watcherEvents: [SleepWatcher.Event] = []
    private var watcher: SleepWatcher?

    override func tearDown() {
        coordinator = nil
        watcher = nil
        sleepEvents = []
        watcherEvents = []
        resumes = 0
        super.tearDown()
    }

    private func makeCoordinator(_ settings: SleepSettings = SleepSettings(), runs: BGRunManager? = nil) throws {
        coordinator = try SleepCoordinator(connection: harness.connection, runs: runs, settings: settings,
                                           onEvent: { [unowned self] in self.sleepEvents.append($0) },
                                           onResume: { [unowned self] in self.resumes += 1 })
        settle()
    }

    /// A round trip on the watching connection, run through the loop: the bus answers in order, so
    /// once its answer is handled, so are the AddMatch and the owner lookup sent before it.
    private func settle(file: StaticString = #filePath, line: UInt = #line) {
        var answered = false
        do {
            let getID = try Message.methodCall(destination: BusDaemon.name, path: BusDaemon.path,
                                               interface: BusDaemon.interface, member: "GetId")
            harness.connection.call(getID, timeout: 5) { _ in answered = true }
        } catch {
            return XCTFail("GetId: \(error)", file: file, line: line)
        }
        waitFor("the bus's answer to GetId", file: file, line: line) { answered }
    }

    private func sleepNames() -> [String] { sleepEvents.map(\.name) }

    private func waitForSleepEvent(_ name: String, count: Int = 1, timeout: Double = 10,
                                   file: StaticString = #filePath, line: UInt = #line) {
        waitFor("\(count) \(name) (have \(sleepNames()))", timeout: timeout, file: file, line: line) {
            self.sleepEvents.filter { $0.name == name }.count >= count
        }
    }

    private func telwatchLocks() -> [Inhibitor] {
        (try? harness.inhibitors())?.filter { $0.who == "telwatch" } ?? []
    }

    // MARK: SleepWatcher

    func testTheWatcherReportsEachSleepAndResumeWithItsTime() throws {
        try startHarness()
        watcher = try SleepWatcher(connection: harness.connection) { [unowned self] in self.watcherEvents.append($0) }
        settle()
        let before = wallClockNow()
        try harness.prepareForSleep(true)
        try harness.prepareForSleep(true)  // a repeat is no new sleep
        try harness.prepareForSleep(false)
        waitFor("the resume") { self.watcherEvents.count >= 2 }
        guard case .preparingForSleep(let slept)? = watcherEvents.first,
              case .resumed(let woke, let since)? = watcherEvents.dropFirst().first else {
            return XCTFail("\(watcherEvents)")
        }
        XCTAssertEqual(slept, before, accuracy: 5)
        XCTAssertEqual(since, slept)
        XCTAssertGreaterThanOrEqual(woke, slept)
        XCTAssertFalse(watcher?.isAsleep ?? true)

        // A resume whose sleep was not seen (telwatch started in between) is still a resume.
        try harness.prepareForSleep(false)
        waitFor("the second resume") { self.watcherEvents.count >= 3 }
        if case .resumed(_, let since)? = watcherEvents.last { XCTAssertNil(since) } else { XCTFail("\(watcherEvents)") }
        XCTAssertEqual(watcherEvents.count, 3, "\(watcherEvents)")
    }

    func testASpoofedPrepareForSleepIsIgnoredWithAWarningAndChangesNothing() throws {
        try startHarness()
        try makeCoordinator()
        // Another subscription of the same process that takes the interface from anyone: now the
        // bus delivers the spoof, and only the owner check stands in its way.
        harness.connection.subscribe(MatchRule(interface: "org.freedesktop.login1.Manager")) { _ in }
        settle()
        try harness.spoofPrepareForSleep(true)
        waitForSleepEvent("sleep-signal-ignored")
        guard case .signalIgnored(let sender, 0)? = sleepEvents.first?.kind else { return XCTFail("\(sleepEvents)") }
        XCTAssertTrue(sender.hasPrefix(":"), sender)
        XCTAssertTrue(sleepEvents.first?.isWarning == true)
        XCTAssertFalse(coordinator?.isAsleep ?? true, "the spoof changed nothing")
        XCTAssertNil(RunStateStore.readSleep(directory: stateDirectory))

        // The real logind is still heard.
        try harness.prepareForSleep(true)
        waitForSleepEvent("sleep")
        XCTAssertEqual(sleepNames(), ["sleep-signal-ignored", "sleep"])
    }

    // MARK: Locks

    func testTheDelayLockIsHeldWhileAwakeReleasedForTheSleepAndTakenAgainAfter() throws {
        try startHarness()
        try makeCoordinator(SleepSettings(delayLock: true))
        waitForSleepEvent("delay-lock-taken")
        XCTAssertEqual(telwatchLocks().map { "\($0.what)/\($0.mode)" }, ["sleep/delay"])
        XCTAssertEqual(coordinator?.armedTimers, 0, "no timer while awake and idle")

        try harness.prepareForSleep(true)
        waitForSleepEvent("delay-lock-released")
        XCTAssertEqual(sleepNames(), ["delay-lock-taken", "sleep", "delay-lock-released"],
                       "the sleep is told (and recorded) before the lock goes")
        XCTAssertFalse(coordinator?.isDelayLockHeld ?? true)
        XCTAssertNotNil(harness.waitForInhibitors { !$0.contains { $0.who == "telwatch" } },
                        "logind no longer waits for telwatch")
        XCTAssertNil(RunStateStore.readSleep(directory: stateDirectory), "no run manager: nothing recorded")

        try harness.prepareForSleep(false)
        waitForSleepEvent("delay-lock-taken", count: 2)
        XCTAssertEqual(telwatchLocks().map(\.mode), ["delay"])
        XCTAssertEqual(resumes, 1)
    }

    func testTheGraceLockIsHeldAfterAResumeForItsTimeOnly() throws {
        try startHarness()
        try makeCoordinator(SleepSettings(resumeGrace: 0.6))
        XCTAssertEqual(coordinator?.armedTimers, 0, "no timer before a resume")
        XCTAssertEqual(telwatchLocks(), [])

        try harness.prepareForSleep(true)
        try harness.prepareForSleep(false)
        waitForSleepEvent("grace-lock-taken")
        let resumed = monotonicNow()
        XCTAssertEqual(coordinator?.armedTimers, 1)
        let held = telwatchLocks()
        XCTAssertEqual(held.map { "\($0.what)/\($0.mode)" }, ["sleep/block"])
        XCTAssertTrue(held.first?.why.contains("after a resume") == true, "\(held)")
        if case .lockTaken(.grace, _, let seconds)? = sleepEvents.last?.kind { XCTAssertEqual(seconds, 0.6) }

        waitForSleepEvent("grace-lock-released")
        XCTAssertGreaterThan(monotonicNow() - resumed, 0.3, "held for its time")
        if case .lockReleased(.grace, let expired)? = sleepEvents.last?.kind { XCTAssertTrue(expired) }
        XCTAssertNotNil(harness.waitForInhibitors { !$0.contains { $0.who == "telwatch" } })
        XCTAssertEqual(coordinator?.armedTimers, 0, "the timer is gone with the lock")
        XCTAssertEqual(sleepNames(), ["sleep", "resume", "grace-lock-taken", "grace-lock-released"])
        XCTAssertEqual(resumes, 1)

        // A sleep during the grace time ends it at once.
        try harness.prepareForSleep(true)
        try harness.prepareForSleep(false)
        waitForSleepEvent("grace-lock-taken", count: 2)
        try harness.prepareForSleep(true)
        waitForSleepEvent("grace-lock-released", count: 2)
        if case .lockReleased(.grace, let expired)? = sleepEvents.last?.kind { XCTAssertFalse(expired) }
        XCTAssertEqual(coordinator?.armedTimers, 0)
    }

    // MARK: A sleep during a run

    func testASleepDuringARunIsOverriddenAndRecorded() throws {
        try startHarness()
        let manager = try makeManager()
        manager.join("call-1", reason: "incoming")
        waitForEvent("the run's lock") { $0.isLockTaken }
        let runID = try XCTUnwrap(manager.run?.id)
        try makeCoordinator(runs: manager)

        try harness.prepareForSleep(true)
        waitForSleepEvent("sleep-overridden")
        XCTAssertEqual(sleepEvents.map(\.kind), [
            .sleep(runID: runID, holders: 1),
            .overridden(runID: runID, lock: .held, inhibit: "sleep:block", holders: 1),
        ])
        XCTAssertTrue(sleepEvents[1].isWarning)
        let record = try XCTUnwrap(RunStateStore.readSleep(directory: stateDirectory))
        XCTAssertTrue(record.lastSleepOverridden)
        XCTAssertTrue(record.isAsleep)
        XCTAssertEqual(record.overrides, 1)
        XCTAssertEqual(record.lastOverrideRun, runID)
        XCTAssertEqual(record.lastOverrideLock, .held)
        XCTAssertEqual(record.lastOverrideAt, record.sleptAt)

        try harness.prepareForSleep(false)
        waitForSleepEvent("resume")
        let resumed = try XCTUnwrap(RunStateStore.readSleep(directory: stateDirectory))
        XCTAssertFalse(resumed.isAsleep)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(resumed.resumedAt), try XCTUnwrap(resumed.sleptAt))
        XCTAssertTrue(manager.isRunning, "a sleep ends no run: the calls decide after the resync")

        // A later telwatch (here: a new coordinator) keeps counting; a sleep with no run clears the flag.
        coordinator?.stop()
        manager.leave("call-1")
        try makeCoordinator(runs: manager)
        try harness.prepareForSleep(true)
        waitForSleepEvent("sleep", count: 2)
        let later = try XCTUnwrap(RunStateStore.readSleep(directory: stateDirectory))
        XCTAssertFalse(later.lastSleepOverridden)
        XCTAssertEqual(later.overrides, 1)
        XCTAssertEqual(later.lastOverrideRun, runID)
    }

    func testTheSleepRecordRoundTripsAndRejectsGarbage() {
        let record = SleepRecord(sleptAt: 1_700_000_000.25, resumedAt: 1_700_000_100.5, lastSleepOverridden: true,
                                 overrides: 3, lastOverrideAt: 1_700_000_000.25, lastOverrideRun: "00ab12cd34ef5678",
                                 lastOverrideLock: .held)
        XCTAssertEqual(SleepRecord(encoded: record.encoded), record)
        XCTAssertFalse(record.isAsleep)
        XCTAssertEqual(SleepRecord(encoded: SleepRecord().encoded), SleepRecord())
        XCTAssertNil(SleepRecord(encoded: "version=2\noverrides=0\n"))
        XCTAssertNil(SleepRecord(encoded: "version=1\noverrides=0\nslept_at=soon\n"))
        XCTAssertNil(SleepRecord(encoded: "garbage"))
        XCTAssertTrue(SleepRecord(sleptAt: 5, resumedAt: 4).isAsleep)
    }
}
