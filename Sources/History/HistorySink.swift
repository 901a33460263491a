import BGRunManager
import CallMonitor
import Glibc
import Loop
import Pipeline

/// Where the daemon keeps its history and for how long.
public struct HistorySettings: Sendable {
    /// The state directory; the database is `history.db` in it.
    public var directory: String
    /// Calls first seen longer ago than this (seconds) are removed; nil keeps every call.
    public var keep: Double?
    /// The longest the loop waits for another program's lock on the database.
    public var busyTimeout = HistorySettings.loopBusyTimeout
    /// What a read or write on the loop's thread may wait for a lock.
    public static let loopBusyTimeout = 0.05
    /// Rows kept in memory while the database cannot be written; past this, new calls are not recorded.
    public var pendingLimit = 4096
    /// After a failed write, the first turn this long after it tries again; each further failure
    /// doubles the wait, up to a minute.
    public var retryDelay = 1.0
    /// When the system booted (wall clock): a row left open from before then is no call that can
    /// still be live. nil: read from the clocks.
    public var bootTime: Double?
    /// A run's calls are synced to disk (one `fdatasync` of the WAL) this long after the run
    /// ended, with those of every run that ended meanwhile, in the first turn with no call live:
    /// a power cut loses at most the calls that ended in the last `syncDelay` seconds and those
    /// still live. 0: in the turn the run ended.
    public var syncDelay = HistorySettings.defaultSyncDelay
    public static let defaultSyncDelay = 5.0

    public init(directory: String, keep: Double?) {
        self.directory = directory
        self.keep = keep
    }
}

/// Records every call in the history database: one row per call, written when the call is
/// first seen and brought up to date as it changes and ends. It collects the rows a loop turn
/// changed and commits them in one transaction in `prepare()`, before the loop waits, so the
/// event stream, the runs and the hooks never wait on the disk (docs/ARCHITECTURE.md, "Call
/// history"). Its one timer is armed only while calls written are not yet synced: the sync, the
/// pruning and the checkpoints happen `syncDelay` after a run ends, once for every run that ended
/// meanwhile, and never in the turn of a ring.
///
/// A database that cannot be written is said once through `report`; what a transient problem
/// (a lock, a full disk, a read-only file) holds back is kept, bounded, and written once it can
/// be: tried again at most every `retryDelay` (doubling) while a run lives, and whenever no run
/// is. A damaged file (found so by SQLite, or overwritten under the daemon: `HistoryStore.check`
/// before each write) is moved aside and a new one started with what was kept, in the same turn;
/// a file replaced under it is opened afresh. A newer schema, or a damaged file that cannot be
/// moved, turns history off until the next start. Either way the calls, runs and hooks go on.
public final class HistorySink: EventSink, LoopHook {
    public let path: String
    private let settings: HistorySettings
    private weak var loop: EventLoop?
    private let clock: () -> Double
    private let report: (String) -> Void

    private var store: HistoryStore?
    private var pending: PendingRows
    private var trouble: WriteTrouble
    /// Calls left live by an earlier telwatch that the start's sync did not find again are closed,
    /// and old calls pruned, in the first write once telwatch is ready.
    private var started = false
    /// The rows an earlier telwatch left open (read when the database is first opened), until the
    /// start's sync has said which of their calls still live: those go on in their row.
    private var leftOpen: [HistoryRow]?
    /// Every stack has been read once: the start-up's own work is done, the database's may begin.
    private var ready = false
    /// A newer schema, or a damaged file that could not be moved aside: nothing more is tried.
    private var isOff = false
    /// Damaged files moved aside since the start; past `startOverLimit`, a damaged file turns
    /// history off (someone damaging it on purpose gets no heap of copies).
    private var startedOver = 0
    static let startOverLimit = 3
    /// A damaged file was just moved aside: the turn writes what was kept to a new one.
    private var startOverDue = false

    private var runLive = false
    private var liveCalls = 0
    /// Written since the WAL was last synced.
    private var wroteSinceSync = false
    /// The sync, pruning and checkpoint are due in the next turn with no call live.
    private var syncDue = false
    /// Armed while a run's calls wait to be synced: made when first needed.
    private var syncTimer: TimerSource?
    private var endedSincePrune = false
    private var lastPrune = 0.0
    private var pruneDue = false
    /// The missed calls not marked seen, as the database counted them (one `SELECT`): when first
    /// asked once the start is settled, and again after each run, when a `telwatch log
    /// --mark-seen` in between is seen. nil until counted.
    private var unseenCounted: Int?
    private var recountDue = true
    /// Missed calls recorded and not yet written: the answer adds them, so it is known before
    /// the turn's own write.
    private var missedUnwritten = 0
    private var unseenCountFailed = false

    /// The database is opened once telwatch is ready (or for the first call, if that comes
    /// first), so that it costs the start-up nothing: calls an earlier telwatch left live are
    /// closed as `unknown` and old calls pruned before anything is written. `report` gets one
    /// line per problem.
    public init(settings: HistorySettings, loop: EventLoop, clock: @escaping () -> Double = wallClockNow,
                report: @escaping (String) -> Void) {
        self.settings = settings
        path = HistoryStore.path(in: settings.directory)
        self.loop = loop
        self.clock = clock
        self.report = report
        pending = PendingRows(limit: settings.pendingLimit)
        trouble = WriteTrouble(delay: settings.retryDelay)
        loop.addHook(self)
    }

    // MARK: Events

    public func receive(_ delivery: Delivery) {
        guard !isOff else { return }
        liveCalls = delivery.liveCalls
        switch delivery.event {
        case .calls(let events, _):
            for call in events {
                switch pending.record(call) {
                case .ended:
                    endedSincePrune = true
                    if call.call?.missed == true { missedUnwritten += 1 }
                case .dropped(first: true):
                    report("history: \(pending.count) calls are waiting to be written to \(path); "
                           + "newer calls are not recorded until it can be written")
                default: break
                }
            }
        case .run(let run):
            switch run.kind {
            case .started: runLive = true
            case .stopped: runLive = false; recountDue = true; runEnded()
            default: break
            }
        case .screened(let screened, _):
            if case .dropped(first: true) = pending.record(screened) {
                report("history: \(pending.count) calls are waiting to be written to \(path); "
                       + "newer calls are not recorded until it can be written")
            }
        case .ready:
            ready = true
        default:
            break
        }
    }

    /// No run is live: what it wrote is made durable, and the database tidied (pruned at most
    /// daily, checkpointed when the WAL has grown), `syncDelay` later in a turn with no call live.
    /// The timer is armed by the first run to end since the last sync, not pushed back by the
    /// next: a stream of calls is synced every `syncDelay` at most, at the first turn with no
    /// call live.
    private func runEnded() {
        let now = clock()
        if settings.keep != nil, endedSincePrune, now - lastPrune >= HistorySink.day || now < lastPrune {
            pruneDue = true
        }
        guard wroteSinceSync || !pending.isEmpty || pruneDue, !syncDue else { return }
        guard settings.syncDelay > 0 else { syncDue = true; return }
        if syncTimer == nil {
            // Without a timer (no loop, or no descriptor left) the sync is not lost, only not
            // delayed: it is due in the next idle turn, as it was before the delay existed.
            syncTimer = try? loop?.timer { [weak self] in self?.syncDue = true }
        }
        guard let syncTimer else { syncDue = true; return }
        if !syncTimer.isArmed { syncTimer.schedule(after: settings.syncDelay) }
    }

    static let day = 86_400.0
    /// The WAL is checkpointed between runs once it holds this many frames (1 MiB, a few dozen
    /// calls), and while a run lives only past `walLimit` (16 MiB: a storm that never idles).
    static let checkpointFrames = 256
    static let walLimit = 4096

    // MARK: The loop turn

    /// Writes what this turn changed, in one transaction, just before the loop waits.
    public var phase: TurnPhase { .persist }

    public func prepare() -> Double? {
        guard !isOff else { return nil }
        let idle = !runLive && liveCalls == 0
        let tidy = syncDue && idle
        guard !pending.isEmpty || tidy || (ready && !started) else { return nil }
        // After a failure, turns try again only now and then, except one with rows to write and
        // no run live: the end of a call writes what waited.
        guard trouble.mayTry || (idle && (tidy || !pending.isEmpty)) else { return nil }
        write(tidy: tidy)
        return nil
    }

    /// `flush`, and again into a new file when it moved a damaged one aside (bounded by
    /// `startOverLimit`).
    private func write(tidy: Bool) {
        flush(tidy: tidy)
        while startOverDue {
            startOverDue = false
            flush(tidy: tidy)
        }
    }

    public func afterWait(now: Double) {}

    private func flush(tidy: Bool) {
        guard var store = openedStore() else { return }
        do {
            switch store.check() {
            case .intact: break
            case .replaced:
                // Its WAL and index, found by name, would be read as the new file's: they go
                // with it (what they held since the last checkpoint belongs to the file replaced).
                store.close(keepWAL: true)
                self.store = nil
                HistoryStore.removeWAL(of: path)
                report("history: \(path) was replaced or removed while telwatch ran; the calls go on in the file now there")
                guard let reopened = openedStore() else { return }
                store = reopened
            case .damaged(let why):
                throw HistoryProblem.damaged(why)
            }
            continueCallsFoundAtStart()
            try store.write(pending.rows)
            if ready && !started { try settleStart(store) }
            if !pending.isEmpty { wroteSinceSync = true }
            pending.written()
            unseenCounted = unseenCounted.map { $0 + missedUnwritten }
            missedUnwritten = 0
            if unseenCountFailed { recountDue = true }
            if tidy {
                if pruneDue { try prune(store) }
                // The runs that ended since the last sync become durable: a power cut loses at
                // most what ended in the last `syncDelay` seconds, and the calls still live.
                if wroteSinceSync {
                    try store.syncWAL()
                    wroteSinceSync = false
                }
                if store.walFrames >= HistorySink.checkpointFrames { try store.checkpoint() }
                syncDue = false
                pruneDue = false
                syncTimer?.cancel()
            } else if store.walFrames >= HistorySink.walLimit {
                try store.checkpoint()
            }
            recovered()
        } catch {
            failed(error)
        }
    }

    /// Missed calls not marked seen (MQTT's "missed calls unseen", asked in the turn's `publish`
    /// phase): what the database counted plus the missed calls recorded since and not yet
    /// written, so asking writes nothing, and the count includes this turn's calls. The start's
    /// own work (the calls an earlier telwatch left open, closed as unknown and perhaps missed) is
    /// done first, when it is still due. nil before `ready`, while history is off, and while the
    /// database cannot be counted (said once).
    public func missedUnseen() -> Int? {
        guard ready, !isOff else { return nil }
        if !started, trouble.mayTry { write(tidy: false) }
        guard started else { return nil }
        if recountDue { recount() }
        return unseenCounted.map { $0 + missedUnwritten }
    }

    /// One `SELECT`; after a failure (another program's lock: up to the busy timeout) it is tried
    /// again only after the next write that works, or the next run's end, not in every turn.
    private func recount() {
        guard let store = openedStore() else { return }
        recountDue = false
        do {
            unseenCounted = try store.unseenCount()
            unseenCountFailed = false
        } catch {
            if !unseenCountFailed { report("history: the missed calls not seen cannot be counted: \(error)") }
            unseenCountFailed = true
        }
    }

    private func openedStore() -> HistoryStore? {
        if let store { return store }
        guard !isOff else { return nil }
        do {
            let opened = try HistoryStore.openForDaemon(path: path, busyTimeout: settings.busyTimeout)
            if !started && leftOpen == nil {
                leftOpen = try opened.leftOpen(since: settings.bootTime ?? bootWallClock())
            }
            store = opened
            return opened
        } catch {
            failed(error)
            return nil
        }
    }

    /// A call found live at start (`initial`) that an earlier telwatch recorded has the id it had
    /// then (the tracker gives it back: docs/modem-stacks.md §1.8), and goes on in that row: a
    /// restart or a crash mid-call leaves one row with the real answer time.
    private func continueCallsFoundAtStart() {
        guard var open = leftOpen, !open.isEmpty else { return }
        for row in pending.foundAtStart {
            guard let at = open.firstIndex(where: { $0.callID == row.callID }) else { continue }
            pending.continueRow(from: open.remove(at: at))
        }
        leftOpen = open
    }

    /// Once every stack has been read: what was left open and not found again ended while no
    /// telwatch looked (`unknown`; missed if it rang in and was never answered); old calls are pruned, and the WAL started over.
    private func settleStart(_ store: HistoryStore) throws {
        let gone = (leftOpen ?? []).map(\.callID)
        let closed = try store.closeUnfinished(callIDs: gone)
        if closed > 0 {
            report("history: \(closed) call\(closed == 1 ? "" : "s") left live by a telwatch that stopped "
                   + "before \(closed == 1 ? "its" : "their") end \(closed == 1 ? "was" : "were") closed as unknown")
        }
        try prune(store)
        try store.restartWAL()
        leftOpen = nil
        started = true
        // A call that rang and ended while no telwatch looked was just counted as missed.
        recountDue = true
    }

    private func prune(_ store: HistoryStore) throws {
        let now = clock()
        if let keep = settings.keep { _ = try store.prune(before: now - keep) }
        lastPrune = now
        endedSincePrune = false
    }

    private func failed(_ error: Error) {
        let problem = HistoryProblem(error, path: path)
        // A lock is another program's, and the connection is fine; anything else opens afresh.
        if problem != .locked {
            store?.close(keepWAL: problem.isDamage)
            store = nil
        }
        if problem.isDamage, startedOver < HistorySink.startOverLimit, let aside = HistoryStore.moveAside(path) {
            startedOver += 1
            startOverDue = true
            report("history: \(problem.what(path)); moved it aside to \(aside) and started a new history; "
                   + "the calls are kept and written to it")
            return
        }
        let news = trouble.failed(problem)
        if problem.isPermanent {
            isOff = true
            pending.forget()
            report("history: \(problem.what(path)); calls are not recorded until telwatch starts again; "
                   + "fix: \(problem.fix(path))")
        } else if news {
            report("history: \(problem.what(path)); the calls are kept and written once it can be written")
        }
    }

    private func recovered() {
        let wasSaid = trouble.succeeded()
        let dropped = pending.takeDropped()
        guard wasSaid || dropped > 0 else { return }
        report("history: writing to \(path) again"
               + (dropped > 0 ? "; \(dropped) call\(dropped == 1 ? " was" : "s were") not recorded meanwhile" : ""))
    }

    // MARK: For tests

    /// WAL syncs made on the open database (its connection's count).
    var walSyncs: Int { store?.syncs ?? 0 }
    /// Calls written wait to be synced: the timer is armed, or its time came and no turn has
    /// been idle since.
    var syncPending: Bool { syncDue || syncTimerArmed }
    var syncTimerArmed: Bool { syncTimer?.isArmed == true }

    // MARK: Shutting down

    /// Writes what is left, closes the calls still live as `unknown` (telwatch will not see their
    /// end) and closes the database. Bounded by the busy timeout.
    public func finish(then done: @escaping () -> Void) {
        if !isOff {
            trouble.tryNow()
            write(tidy: false)
            if !pending.isEmpty {
                report("history: \(pending.count) call\(pending.count == 1 ? "" : "s") could not be written to "
                       + "\(path) before telwatch stopped")
            } else if let store {
                do { _ = try store.closeUnfinished() } catch { failed(error) }
            }
            // Closing checkpoints only when no other program (`telwatch log`) has the file open.
            do { try store?.syncWAL() } catch { failed(error) }
        }
        syncTimer?.cancel()
        syncTimer = nil
        store?.close()
        store = nil
        loop?.removeHook(self)
        done()
    }
}
