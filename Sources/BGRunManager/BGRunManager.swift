import DBus
import Glibc
import Loop
import Processes

/// Background runs: while a run lives it holds a logind inhibitor (and optionally a kernel wakelock), runs the user's
/// command, beats an optional heartbeat and counts down a lease. It knows nothing of calls:
/// holders are opaque strings. The first holder to join starts a run, the last to leave ends it;
/// leaving twice, or leaving a holder that never joined, changes nothing.
///
/// Run hooks (`run-started`, `run-stopped`, `run-expired`) run under an ordering key of their own,
/// with `TELWATCH_RUN_*` variables. Everything happens on the loop's thread.
public final class BGRunManager {
    public static let hookKey = HookKey(BGRunManager.self)

    public let configuration: RunConfiguration
    /// The live run, if any.
    public private(set) var run: RunInfo?
    public private(set) var holders: Set<String> = []
    public private(set) var lock: InhibitorLock?
    /// The live run's command while it runs.
    public private(set) var runCommand: RunCommand?
    public private(set) var isShutDown = false

    private let loop: EventLoop
    private let hooks: HookRunner?
    private let onEvent: (RunEvent) -> Void
    private var store: RunStateStore?
    /// Something that is not a record stands in the record's place: nothing is written.
    private var recordBlocked = false
    private var staleCommandTimer: TimerSource?
    private var recordPending = false
    /// Writes a changed run record at the end of the turn that changed it, after the turn's lines
    /// (the loop's persist phase).
    private lazy var recordWriter = RecordWriter(self)
    private var startedMonotonic = 0.0
    /// Made at the first run and disarmed, not closed, when a run ends: a timerfd made and closed
    /// per run costs four system calls (create, add to the poll set, remove, close) on every ring.
    private var leaseTimer: TimerSource?
    /// When the lease ends (monotonic). Every call event moves it; the kernel timer is re-armed
    /// only when it fires before it, not at every event (time's rate, not the events').
    private var leaseDeadline = 0.0
    private var leaseExpiresAt: Double?
    /// The lease end the state file holds.
    private var recordedLeaseExpiresAt: Double?
    private var heartbeatTimer: TimerSource?
    private var heartbeats = 0
    private var lockState = LockState.off
    private var heldWakelock: KernelWakelock?
    private var stateErrorReported = false
    /// Commands of ended runs, until they are reaped.
    private var stoppingCommands: [pid_t: RunCommand] = [:]
    private var isShuttingDown = false
    private var shutdownWaiters: [() -> Void] = []
    private var shutdownTimer: TimerSource?
    private var waitingForHooks = false

    /// Takes the state directory (throws `RunError.stateDirectoryInUse` if a live telwatch has
    /// it), then recovers a run a dead predecessor left open: `staleRunRecovered`, its kernel
    /// wakelock released, its `run-stopped` hooks queued with reason `stale`, the record removed.
    /// `lockBus` is the bus where logind lives (the system bus); nil means no inhibitor.
    public init(loop: EventLoop, lockBus: Connection?, configuration: RunConfiguration, hooks: HookRunner? = nil,
                onEvent: @escaping (RunEvent) -> Void) throws {
        self.loop = loop
        self.configuration = configuration
        self.hooks = hooks
        self.onEvent = onEvent
        if let directory = configuration.stateDirectory {
            do {
                store = try RunStateStore(directory: directory)
            } catch RunError.stateDirectoryInUse(let directory) {
                throw RunError.stateDirectoryInUse(directory)
            } catch {
                emit(.stateError("cannot use the state directory: \(error)"))
            }
        }
        if let lockBus, let request = configuration.lock {
            lock = try InhibitorLock(connection: lockBus, request: request) { [weak self] event in
                self?.lockChanged(event)
            }
        }
        loop.addHook(recordWriter)
        recoverStaleRun()
    }

    deinit {
        // The lock's descriptor closes and the children are killed with their objects. A live
        // run's record stays: it ended without its stop hook, which the next start runs.
        // No one is left to hear of a failure here; the next start's recovery releases it again.
        if let heldWakelock { try? heldWakelock.release() }
    }

    public var isRunning: Bool { run != nil }

    /// The state directory in use (nil without one, or when it could not be used).
    public var stateStore: RunStateStore? { store }

    /// Time left on the live run's lease.
    public var leaseRemaining: Double? {
        guard leaseTimer?.isArmed == true else { return nil }
        return max(0, leaseDeadline - monotonicNow())
    }

    /// Armed timers (lease, heartbeat, shutdown deadline): none while idle.
    public var armedTimers: Int {
        [leaseTimer, heartbeatTimer, shutdownTimer].reduce(0) { $0 + ($1?.isArmed == true ? 1 : 0) }
    }

    /// The live run as recorded in the state directory.
    public var record: RunRecord? {
        guard let run else { return nil }
        return RunRecord(runID: run.id, reason: run.reason, pid: BGRunManager.ownPID, startedAt: run.startedAt,
                         updatedAt: wallClockNow(), holders: holders.count, lease: configuration.lease,
                         leaseExpiresAt: leaseExpiresAt, lock: lockState, wakelock: heldWakelock,
                         command: runCommand?.identity, pidStart: BGRunManager.ownStart)
    }

    /// This process's pid, read once: glibc asks the kernel at every `getpid()`, and the record is
    /// written twice a ring.
    private static let ownPID = getpid()
    /// This process's start time, recorded next to its pid (`RunRecord.holderIsRunning`).
    private static let ownStart = ProcessIdentity.of(ownPID)?.startTime

    // MARK: Holders

    /// Adds a holder, starting a run if none lives; a holder already in renews the lease.
    /// Returns whether the holder is new. Ignored once shutdown began. `time`: when the holder
    /// came (its event's own time), a run it starts starts then.
    @discardableResult
    public func join(_ holder: String, reason: String, at time: Double = wallClockNow()) -> Bool {
        guard !isShuttingDown else { return false }
        guard run != nil else {
            startRun(holder: holder, reason: reason, at: time)
            return true
        }
        let isNew = holders.insert(holder).inserted
        restartLease()
        if isNew { recordChanged() } else { recordLeaseIfMoved() }
        return isNew
    }

    /// Removes a holder; the run ends (reason `idle`) when it was the last, at `time` (the
    /// holder's last event's own time). Returns whether it held the run.
    @discardableResult
    public func leave(_ holder: String, at time: Double = wallClockNow()) -> Bool {
        guard run != nil, holders.remove(holder) != nil else { return false }
        if holders.isEmpty { endRun(reason: .idle, at: time) } else { recordChanged() }
        return true
    }

    /// Activity from a holder: the lease starts over. Returns whether the holder holds the run.
    @discardableResult
    public func renew(_ holder: String) -> Bool {
        guard holders.contains(holder) else { return false }
        restartLease()
        recordLeaseIfMoved()
        return true
    }

    // MARK: Shutdown

    /// Ends the live run (reason `shutdown`), releases the lock, stops the run command and waits,
    /// through the loop, for it and every hook to finish; after `shutdownTimeout` they are
    /// killed. `done` runs once all are reaped (bounded: 2 s after the kill at most).
    public func shutdown(then done: @escaping () -> Void) {
        guard !isShutDown else { return done() }
        shutdownWaiters.append(done)
        guard !isShuttingDown else { return }
        isShuttingDown = true
        if run != nil { endRun(reason: .shutdown) }
        // Now, not at the next turn: the loop may not turn again.
        syncRecord()
        lock = nil
        armShutdownDeadline(after: configuration.shutdownTimeout) { [weak self] in
            guard let self else { return }
            for command in self.stoppingCommands.values { command.kill() }
            self.hooks?.abort()
            self.armShutdownDeadline(after: 2) { [weak self] in self?.completeShutdown() }
        }
        finishShutdownIfQuiet()
    }

    private func armShutdownDeadline(after seconds: Double, _ handler: @escaping () -> Void) {
        do {
            shutdownTimer = try loop.timer(handler)
            shutdownTimer?.schedule(after: seconds)
        } catch {
            // Without a deadline the wait could last forever: give no grace at all.
            emit(.timerUnavailable("no shutdown deadline (\(error)): stopping everything now"))
            loop.soon(handler)
        }
    }

    private func finishShutdownIfQuiet() {
        guard isShuttingDown, !isShutDown, stoppingCommands.isEmpty else { return }
        if let hooks, !hooks.isIdle {
            guard !waitingForHooks else { return }
            waitingForHooks = true
            hooks.whenIdle { [weak self] in
                self?.waitingForHooks = false
                self?.finishShutdownIfQuiet()
            }
            return
        }
        completeShutdown()
    }

    private func completeShutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        shutdownTimer = nil
        let waiters = shutdownWaiters
        shutdownWaiters.removeAll()
        for waiter in waiters { waiter() }
    }

    // MARK: Runs

    private func startRun(holder: String, reason: String, at time: Double) {
        let info = RunInfo(id: BGRunManager.newRunID(), reason: reason, firstHolder: holder, startedAt: time)
        run = info
        holders = [holder]
        startedMonotonic = monotonicNow()
        heartbeats = 0
        stateErrorReported = false
        lockState = configuration.lock == nil ? .off : .pending
        if let wakelock = configuration.wakelock, wakelock.isAvailable { heldWakelock = wakelock }
        emit(.started(info), at: time)
        runHooks(.started, info, reason: reason, duration: nil, at: time)
        armLease()
        // The lock request goes out first: recording the run is file I/O, and a ring is waiting.
        takeLock()
        takeWakelock()
        startCommand(info)
        recordChanged()
        armHeartbeat(info)
    }

    private func endRun(reason: RunEndReason, at time: Double = wallClockNow()) {
        guard let info = run else { return }
        let duration = monotonicNow() - startedMonotonic
        run = nil
        holders.removeAll()
        leaseTimer?.cancel()
        leaseExpiresAt = nil
        heartbeatTimer = nil
        lock?.release()
        releaseWakelock()
        if let command = runCommand {
            runCommand = nil
            let pid = command.pid
            stoppingCommands[pid] = command
            command.stop(grace: configuration.commandGrace) { [weak self] in
                self?.stoppingCommands[pid] = nil
                self?.finishShutdownIfQuiet()
            }
        }
        recordChanged()
        emit(.stopped(info, reason: reason, duration: duration), at: time)
        runHooks(.stopped, info, reason: reason.rawValue, duration: duration, at: time)
    }

    private func expire() {
        guard let info = run else { return }
        let duration = monotonicNow() - startedMonotonic
        let now = wallClockNow()
        emit(.expired(info, duration: duration), at: now)
        runHooks(.expired, info, reason: RunEndReason.expired.rawValue, duration: duration, at: now)
        endRun(reason: .expired, at: now)
    }

    private func armLease() {
        guard configuration.lease != nil else { return }
        do {
            if leaseTimer == nil { leaseTimer = try loop.timer { [weak self] in self?.leaseTimerFired() } }
        } catch {
            emit(.timerUnavailable("no lease timer (\(error)): this run ends only when its last call does"))
        }
        restartLease()
        leaseTimer?.schedule(after: configuration.lease ?? 0)
    }

    /// The caller writes the record.
    private func restartLease() {
        guard let lease = configuration.lease, leaseTimer != nil else { return }
        leaseDeadline = monotonicNow() + lease
        leaseExpiresAt = wallClockNow() + lease
    }

    private func leaseTimerFired() {
        let left = leaseDeadline - monotonicNow()
        // Renewed since it was armed: wait for the rest.
        guard left <= 0 else {
            leaseTimer?.schedule(after: left)
            return
        }
        expire()
    }

    private func armHeartbeat(_ info: RunInfo) {
        guard let interval = configuration.heartbeat else { return }
        do {
            heartbeatTimer = try loop.timer { [weak self] in
                guard let self else { return }
                self.heartbeats += 1
                self.emit(.heartbeat(runID: info.id, count: self.heartbeats,
                                     elapsed: monotonicNow() - self.startedMonotonic))
            }
            heartbeatTimer?.schedule(after: interval, repeating: interval)
        } catch {
            emit(.timerUnavailable("no heartbeat timer (\(error)): this run beats no heartbeat"))
        }
    }

    // MARK: What a run holds

    private func takeLock() {
        guard configuration.lock != nil else { return }
        if let lock {
            lock.acquire()
        } else {
            lockState = .unavailable
            emit(.lockUnavailable("no system bus connection: nothing is inhibited"))
            recordChanged()
        }
    }

    private func lockChanged(_ event: InhibitorLock.Event) {
        guard run != nil, let request = configuration.lock else { return }
        switch event {
        case .taken:
            lockState = .held
            emit(.lockTaken(request))
        case .retaken:
            lockState = .held
            emit(.lockRetaken(request))
        case .unavailable(let why):
            lockState = .unavailable
            emit(.lockUnavailable(why))
        }
        recordChanged()
    }

    private func releaseWakelock() {
        guard let wakelock = heldWakelock else { return }
        heldWakelock = nil
        do { try wakelock.release() } catch { emit(.wakelockReleaseFailed("\(wakelock.name): \(error)")) }
    }

    private func takeWakelock() {
        guard let wakelock = configuration.wakelock else { return }
        guard heldWakelock != nil else {
            return emit(.wakelockUnavailable("no \(wakelock.directory)/wake_lock on this system"))
        }
        do {
            try wakelock.acquire()
            emit(.wakelockTaken(wakelock))
        } catch {
            heldWakelock = nil
            emit(.wakelockUnavailable("\(error)"))
            recordChanged()
        }
    }

    private func startCommand(_ info: RunInfo) {
        guard let arguments = configuration.command, !arguments.isEmpty else { return }
        let environment = ChildEnvironment.make(
            base: configuration.commandEnvironment,
            variables: [("TELWATCH_RUN_ID", info.id), ("TELWATCH_RUN_REASON", info.reason)])
        do {
            var pid: pid_t = 0
            let command = try RunCommand(
                loop: loop, arguments: arguments, environment: environment,
                stdout: configuration.commandStdout, stderr: configuration.commandStderr
            ) { [weak self] status, early in
                guard let self else { return }
                if self.runCommand?.pid == pid { self.runCommand = nil }
                self.emit(.runCommandExited(pid: pid, status: status, early: early))
            }
            pid = command.pid
            runCommand = command
            emit(.runCommandStarted(pid: pid))
        } catch {
            emit(.runCommandFailed("cannot start \(arguments[0]): \(error)"))
        }
    }

    // MARK: Crash recovery

    private func recoverStaleRun() {
        guard let store else { return }
        switch store.checkRecord() {
        case .absent:
            return
        case .unusable(let what, removable: false):
            // Not ours to remove: say so once, and record nothing rather than fail at every run.
            // The store stays: its instance lock still keeps a second telwatch out.
            recordBlocked = true
            emit(.stateError("\(what): runs are not recorded (crash recovery and status will not see them) "
                             + "until it is removed"))
            return
        case .unusable(let what, removable: true):
            emit(.stateError("\(what) was left in \(store.directory); removed"))
        case .record(let record):
            emit(.staleRunRecovered(record))
            if let wakelock = record.wakelock {
                do { try wakelock.release() } catch { emit(.wakelockReleaseFailed("\(wakelock.name): \(error)")) }
            }
            let info = RunInfo(id: record.runID, reason: record.reason, firstHolder: "", startedAt: record.startedAt)
            runHooks(.stopped, info, reason: RunEndReason.stale.rawValue, duration: nil, lock: .released,
                     extra: [("TELWATCH_STALE_PID", String(record.pid))])
            if let command = record.command { stopStaleCommand(command) }
        }
        removeRecord()
    }

    /// The dead telwatch's run command, if it is still there (a command that ignored the
    /// SIGTERM its parent's death sent): TERM to its group now, KILL after the grace. The
    /// recorded start time makes sure it is that process, not one that got its pid since.
    private func stopStaleCommand(_ command: ProcessIdentity) {
        guard command.isRunning else { return }
        emit(.staleCommandStopped(pid: command.pid))
        _ = kill(-command.pid, SIGTERM)
        let killGroup = {
            // The leader may be gone while members of its group live on: a group id is not
            // reused while the group has a member.
            if command.isRunning || (ProcessIdentity.of(command.pid) == nil && kill(-command.pid, 0) == 0) {
                _ = kill(-command.pid, SIGKILL)
            }
        }
        do {
            let timer = try loop.timer { [weak self] in
                killGroup()
                self?.staleCommandTimer = nil
            }
            timer.schedule(after: configuration.commandGrace)
            staleCommandTimer = timer
        } catch {
            killGroup()
        }
    }

    private func removeRecord() {
        guard !recordBlocked else { return }
        do { try store?.remove() } catch { reportStateError("cannot remove the run record: \(error)") }
    }

    /// Every call event renews the lease; rewriting the record for each would put file I/O on
    /// every event. The recorded lease end may lag by a tenth of the lease, which `status` shows.
    private func recordLeaseIfMoved() {
        guard let lease = configuration.lease, let leaseExpiresAt else { return }
        if leaseExpiresAt - (recordedLeaseExpiresAt ?? 0) > lease / 10 { recordChanged() }
    }

    /// The record is brought up to date once per loop turn, after the turn's events are out:
    /// file I/O stays off the path from a signal to its line, and a turn of many events writes
    /// once. (A telwatch killed within that turn leaves the turn before's record, which stale
    /// recovery handles like any other.)
    private func recordChanged() {
        recordPending = true
    }

    private final class RecordWriter: LoopHook {
        unowned let manager: BGRunManager
        init(_ manager: BGRunManager) { self.manager = manager }
        var phase: TurnPhase { .persist }
        func prepare() -> Double? {
            if manager.recordPending { manager.syncRecord() }
            return nil
        }
        func afterWait(now: Double) {}
    }

    /// Writes the live run's record, or removes it when no run lives.
    private func syncRecord() {
        recordPending = false
        if run == nil { removeRecord() } else { writeRecord() }
    }

    private func writeRecord() {
        guard let store, let record, !recordBlocked else { return }
        recordedLeaseExpiresAt = leaseExpiresAt
        do {
            try store.write(record)
        } catch {
            reportStateError("cannot record the run: \(error)")
        }
    }

    /// Once per run: a state directory that fails, fails at every write.
    private func reportStateError(_ message: String) {
        guard !stateErrorReported else { return }
        stateErrorReported = true
        emit(.stateError(message))
    }

    // MARK: Output

    /// `time`: the moment the event tells of, when its cause already carries one (a run started
    /// by a ring starts at the ring's time); the clock is read only for an event without one.
    private func emit(_ kind: RunEvent.Kind, at time: Double = wallClockNow()) {
        onEvent(RunEvent(time: time, kind: kind))
    }

    /// `TELWATCH_RUN_REASON` is why the run started for `run-started`, why it ended otherwise.
    private func runHooks(_ event: RunHookEvent, _ info: RunInfo, reason: String, duration: Double?, lock: LockState? = nil,
                          extra: [(name: String, value: String)] = [], at time: Double = wallClockNow()) {
        guard let hooks else { return }
        let variables: [(name: String, value: String)] = [
            ("TELWATCH_RUN_ID", info.id),
            ("TELWATCH_RUN_REASON", reason),
            ("TELWATCH_RUN_START_REASON", info.reason),
            ("TELWATCH_RUN_HOLDER", info.firstHolder),
            ("TELWATCH_RUN_HOLDERS", String(holders.count)),
            ("TELWATCH_RUN_STARTED", formatSeconds(info.startedAt)),
            ("TELWATCH_RUN_DURATION", duration.map(formatSeconds) ?? ""),
            ("TELWATCH_LOCK", (lock ?? lockState).rawValue),
            ("TELWATCH_TIME", formatSeconds(time)),
        ] + extra
        hooks.run(event: event.rawValue, key: BGRunManager.hookKey, variables: variables)
    }

    private static func newRunID() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = String(generator.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
