import DBus
import Loop

/// What a system sleep means for runs. It knows logind and runs, not calls.
///
/// Before the sleep (`PrepareForSleep(true)`): a `sleep` event; if a run is live, its `block`
/// lock should have prevented the sleep, so a `sleep-overridden` warning says it did not; the sleep
/// is recorded in the state directory (`last-sleep`); the grace lock, if held, is given up; and
/// last of all the delay lock is released, which lets logind go on.
///
/// After the resume (`PrepareForSleep(false)`): the resume is recorded, a `resume` event, the
/// grace lock is taken and its one timer armed (the only timer this type ever arms, and only
/// then), `onResume` runs (the caller resyncs every call backend), and the delay lock is taken again.
public final class SleepCoordinator {
    public let settings: SleepSettings
    private let runs: BGRunManager?
    private let onEvent: (SleepEvent) -> Void
    private let onResume: () -> Void
    private let clock: () -> Double
    private var watcher: SleepWatcher?
    private var delayLock: InhibitorLock?
    private var graceLock: TimedInhibitorLock?
    private var stateErrorReported = false
    private var isStopped = false
    /// The last sleep and resume, as recorded (loaded from the state directory at start).
    public private(set) var record: SleepRecord

    /// `connection` is the bus where logind lives. The run manager's state directory holds the
    /// sleep record; without a run manager nothing is recorded and no run can be overridden.
    public init(connection: Connection, runs: BGRunManager?, settings: SleepSettings,
                clock: @escaping () -> Double = wallClockNow,
                onEvent: @escaping (SleepEvent) -> Void, onResume: @escaping () -> Void) throws {
        self.settings = settings
        self.runs = runs
        self.onEvent = onEvent
        self.onResume = onResume
        self.clock = clock
        record = runs?.stateStore?.readSleep() ?? SleepRecord()
        if settings.delayLock {
            let request = settings.delayRequest
            delayLock = try InhibitorLock(connection: connection, request: request) { [weak self] event in
                self?.lockChanged(.delay, request, event)
            }
        }
        if let seconds = settings.resumeGrace, seconds > 0 {
            let request = settings.graceRequest
            graceLock = try TimedInhibitorLock(loop: connection.loop, connection: connection, request: request) {
                [weak self] event in self?.graceChanged(request, seconds: seconds, event)
            }
        }
        watcher = try SleepWatcher(connection: connection, clock: clock) { [weak self] event in self?.handle(event) }
        delayLock?.acquire()
    }

    deinit { stop() }

    /// Armed timers: the grace timer, only between a resume and the end of its time.
    public var armedTimers: Int { graceLock?.isArmed == true ? 1 : 0 }
    public var isDelayLockHeld: Bool { delayLock?.isHeld == true }
    public var isGraceLockHeld: Bool { graceLock?.isHeld == true }
    public var isAsleep: Bool { watcher?.isAsleep == true }

    /// Stops following sleeps and gives both locks up; no event after this.
    public func stop() {
        guard !isStopped else { return }
        isStopped = true
        watcher?.cancel()
        watcher = nil
        delayLock?.release()
        graceLock = nil
    }

    // MARK: Sleep and resume

    private func handle(_ event: SleepWatcher.Event) {
        guard !isStopped else { return }
        switch event {
        case .preparingForSleep(let time): preparing(at: time)
        case .resumed(let time, let since): resumed(at: time, asleepSince: since)
        case .ignored(let sender, let suppressed): emit(.signalIgnored(sender: sender, suppressed: suppressed))
        case .malformed(let signature): emit(.malformedSignal(signature: signature))
        }
    }

    private func preparing(at time: Double) {
        let run = runs?.run
        emit(.sleep(runID: run?.id, holders: runs?.holders.count ?? 0), at: time)
        record.sleptAt = time
        record.lastSleepOverridden = false
        if let runs, let run {
            let lock = runs.record?.lock ?? .off
            let inhibit = runs.configuration.lock.map { "\($0.what):\($0.mode)" } ?? "none"
            emit(.overridden(runID: run.id, lock: lock, inhibit: inhibit, holders: runs.holders.count), at: time)
            record.lastSleepOverridden = true
            record.overrides += 1
            record.lastOverrideAt = time
            record.lastOverrideRun = run.id
            record.lastOverrideLock = lock
        }
        writeRecord()
        // Nothing to protect while asleep; a new grace period starts at the next resume.
        graceLock?.release()
        // Last: closing it lets logind go on with the sleep.
        if let delayLock, delayLock.isHeld {
            emit(.lockReleased(.delay, expired: false), at: time)
        }
        delayLock?.release()
    }

    private func resumed(at time: Double, asleepSince: Double?) {
        record.resumedAt = time
        writeRecord()
        emit(.resume(asleepFor: asleepSince.map { max(0, time - $0) }), at: time)
        if let seconds = settings.resumeGrace, seconds > 0 { graceLock?.hold(for: seconds) }
        onResume()
        delayLock?.acquire()
    }

    // MARK: Locks

    private func lockChanged(_ role: SleepEvent.LockRole, _ request: InhibitorRequest, _ event: InhibitorLock.Event) {
        guard !isStopped else { return }
        switch event {
        case .taken, .retaken: emit(.lockTaken(role, request, seconds: nil))
        case .unavailable(let why): emit(.lockUnavailable(role, why))
        }
    }

    private func graceChanged(_ request: InhibitorRequest, seconds: Double, _ event: TimedInhibitorLock.Event) {
        guard !isStopped else { return }
        switch event {
        case .taken: emit(.lockTaken(.grace, request, seconds: seconds))
        case .unavailable(let why): emit(.lockUnavailable(.grace, why))
        case .released(let expired): emit(.lockReleased(.grace, expired: expired))
        }
    }

    // MARK: Output

    private func writeRecord() {
        guard let store = runs?.stateStore else { return }
        do {
            try store.writeSleep(record)
        } catch {
            guard !stateErrorReported else { return }
            stateErrorReported = true
            emit(.stateError("cannot record the sleep: \(error)"))
        }
    }

    private func emit(_ kind: SleepEvent.Kind, at time: Double? = nil) {
        onEvent(SleepEvent(time: time ?? clock(), kind: kind))
    }
}
