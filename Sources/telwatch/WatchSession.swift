import BGRunManager
import CallMonitor
import DBus
import Glibc

/// The watch pipeline: bus → CallMonitor → (stdout line, TelManager → runs and hooks).
/// `telwatch watch` runs it against a real stack, `telwatch demo` against the built-in simulator;
/// the output is the same either way.
final class WatchSession {
    let options: WatchOptions
    let loop: EventLoop
    let connection: Connection
    private let output: LineWriter
    private let callFormat: CallEventFormat
    private var monitor: CallMonitor!
    private var runs: BGRunManager?
    private var hooks: HookRunner?
    private var telManager: TelManager!
    private var sleep: SleepCoordinator?
    private var signalSource: SignalSource?
    private var pendingSync: Set<BackendKind>
    private let startedAt = monotonicNow()
    private var stopping = false
    /// Runs once, when every selected stack has synced (or is known to be absent).
    var onReady: (() -> Void)?
    private(set) var isReady = false
    /// The exit status once the session has ended.
    private(set) var exitStatus = ExitStatus.success
    /// Runs once everything is released after `stop`.
    var onFinished: (() -> Void)?

    init(options: WatchOptions, loop: EventLoop, connection: Connection, output: LineWriter) throws {
        self.options = options
        self.loop = loop
        self.connection = connection
        self.output = output
        callFormat = CallEventFormat(redactNumbers: options.redactNumbers)
        let selection = BackendSelection(rawValue: options.backend.rawValue) ?? .auto
        pendingSync = Set(selection.kinds)

        if options.hooksDirectory != nil || !options.hookCommands.isEmpty {
            // Hooks write to telwatch's stderr: stdout belongs to the event stream (`| jq`).
            let runner = HookRunner(loop: loop, settings: HookSettings(
                directory: options.hooksDirectory, commands: options.hookCommands, timeout: options.hookTimeout,
                stdout: .fd(2), stderr: .fd(2)))
            runner.onOutcome = { [weak self] outcome in self?.report(outcome) }
            hooks = runner
        }
        var configuration = RunConfiguration()
        configuration.lock = options.inhibitWhat.map {
            InhibitorRequest(what: $0, who: "telwatch", why: "a call is in progress", mode: options.inhibitMode)
        }
        configuration.wakelock = options.wakelock ? KernelWakelock(name: "telwatch") : nil
        configuration.command = options.runCommand.isEmpty ? nil : options.runCommand
        configuration.commandGrace = options.stopGrace
        configuration.commandStdout = .fd(2)
        configuration.heartbeat = options.heartbeat
        configuration.lease = options.lease
        configuration.stateDirectory = options.stateDirectory ?? RunStateStore.defaultDirectory()
        runs = try BGRunManager(loop: loop, lockBus: connection, configuration: configuration, hooks: hooks) {
            [weak self] event in self?.report(event)
        }
        telManager = TelManager(runs: runs, hooks: hooks)
        monitor = CallMonitor(connection: connection, backends: selection, onEvents: { [weak self] events in
            self?.report(events)
        }, onNotice: { [weak self] notice in self?.report(notice) })
    }

    /// Follows the stacks until SIGINT/SIGTERM, a lost bus, or a closed stdout.
    func start() throws {
        signalSource = try loop.signals([SIGINT, SIGTERM, SIGUSR1]) { [weak self] signal in
            guard let self else { return }
            if signal == SIGUSR1 { self.printStats("stats") } else { self.stop(status: ExitStatus.success) }
        }
        connection.onDisconnect = { [weak self] in
            guard let self else { return }
            warn("lost the \(self.options.bus.label) bus; stopping (a supervisor should restart telwatch)")
            self.monitor.connectionLost()
            self.stop(status: ExitStatus.busUnavailable)
        }
        try monitor.start()
        // After the backends: a resume then finds them started, ready to resync.
        sleep = try SleepCoordinator(
            connection: connection, runs: runs,
            settings: SleepSettings(delayLock: options.sleepDelayLock, resumeGrace: options.resumeGrace),
            onEvent: { [weak self] event in self?.report(event) },
            onResume: { [weak self] in self?.monitor.resync() })
    }

    var liveCalls: [CallSnapshot] { monitor.liveCalls }
    var decodedSignals: UInt64 { monitor.decodedSignals }
    var isRunHeld: Bool { runs?.isRunning ?? false }

    /// Ends the live run (lock released, run command stopped, children reaped), then finishes.
    func stop(status: Int32) {
        guard !stopping else { return }
        stopping = true
        exitStatus = status
        sleep?.stop()
        monitor.stop()
        telManager.shutdown { [weak self] in
            guard let self else { return }
            if self.options.json { self.printStats("exit") }
            self.signalSource?.cancel()
            self.onFinished?()
        }
    }

    // MARK: Output

    private func emit(_ line: String?) {
        guard let line else { return }
        output.write(line)
        if output.isBroken { stop(status: ExitStatus.success) }  // the reader is gone: `telwatch | head`
    }

    private func emit(_ object: JSONObject?) {
        guard let object else { return }
        output.write(line: object.lineBytes)
        if output.isBroken { stop(status: ExitStatus.success) }
    }

    private func report(_ events: [TrackerEvent]) {
        let now = wallClockNow()
        let live = monitor.liveCallCount
        // The tracker alone knows which calls are missed (after a resume the snapshot cannot tell).
        var missed: Set<String> = []
        for case .missed(let call) in events { missed.insert(call.id) }
        for event in events {
            if options.json {
                emit(callFormat.jsonObject(event, time: now, liveCalls: live, missed: missed.contains(event.call.id)))
            } else {
                emit(callFormat.text(event, time: now, liveCalls: live))
            }
        }
        telManager.handle(events)
    }

    private func report(_ event: SleepEvent) {
        if let warning = ServiceEventFormat.warning(event), options.verbosity != .quiet { warn(warning) }
        let live = monitor?.liveCallCount ?? 0
        if options.json {
            emit(ServiceEventFormat.json(event, liveCalls: live))
        } else if options.verbosity == .verbose
            || (options.verbosity == .normal && ServiceEventFormat.isShownByDefault(event)) {
            emit(ServiceEventFormat.text(event, liveCalls: live))
        }
    }

    private func report(_ event: RunEvent) {
        if let warning = ServiceEventFormat.warning(event), options.verbosity != .quiet { warn(warning) }
        if options.json {
            emit(ServiceEventFormat.json(event, liveCalls: monitor?.liveCallCount ?? 0))
        } else if options.verbosity == .verbose
            || (options.verbosity == .normal && ServiceEventFormat.isShownByDefault(event)) {
            emit(ServiceEventFormat.text(event))
        }
    }

    private func report(_ notice: BackendNotice) {
        if ServiceEventFormat.isWarning(notice) {
            if options.verbosity != .quiet { warn(notice.description) }
        }
        let now = wallClockNow()
        if options.json {
            emit(ServiceEventFormat.json(notice, time: now))
        } else if options.verbosity != .quiet {
            emit(ServiceEventFormat.text(notice, time: now))
        }
        switch notice {
        case .synced(let kind, _, _), .serviceAbsent(let kind), .syncRefused(let kind, _), .syncFailed(let kind, _):
            pendingSync.remove(kind)
        default: break
        }
        if pendingSync.isEmpty && !isReady {
            isReady = true
            if options.json {
                var object = JSONObject()
                object.add("event", "ready")
                object.add("time", time: now)
                object.add("live_calls", monitor.liveCallCount)
                emit(object.line)
            }
            onReady?()
        }
    }

    private func report(_ outcome: HookOutcome) {
        let command = outcome.command.joined(separator: " ")
        if !outcome.result.isSuccess, options.verbosity != .quiet {
            warn("hook \(command) for \(outcome.event): \(outcome.result)")
        } else if options.verbosity == .verbose {
            warn("hook \(command) for \(outcome.event): \(outcome.result) in \(Duration.text(outcome.duration))")
        }
    }

    private func printStats(_ name: String) {
        var object = JSONObject()
        object.add("event", name)
        object.add("time", time: wallClockNow())
        object.add("signals", Int(monitor.decodedSignals))
        object.add("uptime", seconds: monotonicNow() - startedAt)
        object.add("live_calls", monitor.liveCallCount)
        if options.json { output.write(object.line) } else { warn(object.line) }
    }
}
