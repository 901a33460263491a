import CSQLite
import CallMonitor
import Glibc
import Loop
import Pipeline
import SQLite
import TestSupport
import XCTest
@testable import BGRunManager
@testable import History

/// A scratch state directory, a loop, and a real `CallTracker` whose events reach a
/// `HistorySink` as the pipeline hands them on; the database is real SQLite in that directory.
class HistoryTestCase: XCTestCase {
    var scratch: ScratchDirectory!
    var loop: EventLoop!
    var tracker = CallTracker(makeID: SequentialIDs().next)
    var now = 1_780_000_000.0
    var reports: [String] = []
    var sink: HistorySink?

    var directory: String { scratch.path }
    var path: String { HistoryStore.path(in: directory) }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory(prefix: "telwatch-history")
        loop = try EventLoop()
        tracker = CallTracker(makeID: SequentialIDs().next)
        reports = []
    }

    override func tearDown() {
        sink?.finish {}
        sink = nil
        scratch?.remove()
    }

    /// A sink as the daemon makes it; it opens the database once telwatch is `ready`, which
    /// follows here at once unless `ready` is false. `syncDelay` 0: a run's end is synced, pruned
    /// and checkpointed in its own turn (the daemon waits a few seconds: its own tests say so).
    @discardableResult
    func startSink(keep: Double? = 365 * 86_400, retryDelay: Double = 0, busyTimeout: Double = 0.05,
                   pendingLimit: Int = 4096, ready: Bool = true, syncDelay: Double = 0) -> HistorySink {
        var settings = HistorySettings(directory: directory, keep: keep)
        settings.retryDelay = retryDelay
        settings.busyTimeout = busyTimeout
        settings.pendingLimit = pendingLimit
        settings.syncDelay = syncDelay
        // The test's clock is not the machine's: no row is from before a boot.
        settings.bootTime = 0
        let made = HistorySink(settings: settings, loop: loop, clock: { [unowned self] in self.now },
                               report: { [unowned self] in self.reports.append($0) })
        sink = made
        if ready {
            made.receive(Delivery(.ready(time: now), liveCalls: tracker.liveCount))
            turn()
        }
        return made
    }

    /// One loop turn: what the sink gathered is written before the loop waits (here: not at all).
    func turn() { loop.iterate(maxWait: 0) }

    // MARK: Calls, through the real tracker

    func apply(_ event: BackendEvent) {
        let events = tracker.apply(event, at: now)
        sink?.receive(Delivery(.calls(events, time: now), liveCalls: tracker.liveCount))
    }

    func ring(_ n: Int, _ number: String) {
        apply(.callAppeared(mmKey(n), modem: mmModem, CallObservation(phase: .live(.incoming, .ringing),
                                                                       direction: .incoming, number: number,
                                                                       reason: "incoming-new"), initial: false))
    }

    func dial(_ n: Int, _ number: String) {
        apply(.callAppeared(mmKey(n), modem: mmModem, CallObservation(phase: .live(.dialing, .dialing),
                                                                       direction: .outgoing, number: number), initial: false))
    }

    func change(_ n: Int, _ phase: CallPhase, reason: String? = nil) {
        apply(.callChanged(mmKey(n), CallObservation(phase: phase, reason: reason)))
    }

    func end(_ n: Int, reason: String = "terminated") { change(n, .ended, reason: reason) }

    private var run: RunInfo?

    func runStarted() {
        let info = RunInfo(id: "run-\(now)", reason: "incoming", firstHolder: "id-1", startedAt: now)
        run = info
        sink?.receive(Delivery(.run(RunEvent(time: now, kind: .started(info))), liveCalls: tracker.liveCount))
    }

    func runStopped() {
        guard let info = run else { return }
        run = nil
        sink?.receive(Delivery(.run(RunEvent(time: now, kind: .stopped(info, reason: .idle, duration: now - info.startedAt))),
                      liveCalls: tracker.liveCount))
    }

    // MARK: Looking at the file

    /// A connection of the test's own, as another program would open the file.
    func openDatabase() throws -> SQLiteDatabase {
        try SQLiteDatabase(path: path, flags: SQLITE_OPEN_READWRITE)
    }

    func rows(_ query: HistoryQuery = HistoryQuery()) throws -> [HistoryRow] {
        try XCTUnwrap(HistoryReader(path: path)).calls(query)
    }

    func integrityCheck() throws -> String {
        try openDatabase().text("PRAGMA integrity_check") ?? "no answer"
    }

    /// Commits seen by another connection: `PRAGMA data_version` moves when someone else commits.
    func dataVersion(_ database: SQLiteDatabase) throws -> Int {
        try database.integer(pragma: "data_version")
    }
}
