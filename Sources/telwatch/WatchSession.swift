import BGRunManager
import CallMonitor
import Contacts
import DBus
import Glibc
import History
import Loop
import MQTTExport
import MonitorAPI
import PhoneActions
import Pipeline
import Processes

/// The watch pipeline, assembled from the options: bus → CallMonitor → tracker → sinks.
/// `telwatch watch` runs it against a real stack, `telwatch demo` against the built-in simulator;
/// the output is the same either way. The order of the sinks is set here, once
/// (docs/ARCHITECTURE.md, "The pipeline"): WarningSink, OutputSink, ServiceManagerSink,
/// TelManager, PhoneActions, ScopedCommandSink, MonitorAPI, CallHookSink, MQTTSink, LiveCallRecorder,
/// HistorySink.
/// It is also the session the sinks ask (`SinkSession`), and it hands a reloaded configuration
/// to each part that takes one (`ReloadsOptions`).
final class WatchSession: SinkSession {
    let options: WatchOptions
    let loop: EventLoop
    let connection: Connection
    /// logind's own connection (the inhibitor lock and PrepareForSleep): whatever a stack does to
    /// the monitor's connection (a pile of unanswered calls counts against it at the bus, and
    /// past the bus's limit every call on it fails) can never cost the lock
    /// (docs/modem-stacks.md §8).
    let lockConnection: Connection
    private let pipeline: EventPipeline
    private let warnings: WarningSink
    private let stream: OutputSink
    private let hooks: HookRunner
    private var scopedCommands: ScopedCommandSink?
    private var mqtt: MQTTSink?
    /// Call screening (`--screening`): decides before the pipeline sees a call's events.
    private var screening: WatchScreening!
    /// Armed only while a ModemManager call rings in without a number: when it becomes a withheld caller.
    private var withheldTimer: TimerSource?
    /// Parses the options again (SIGHUP); nil when they cannot be read again.
    var reloadOptions: () throws -> WatchOptions? = { nil }
    private var monitor: CallMonitor!
    private var runs: BGRunManager?
    /// The call history, when it is on (for the D-Bus API's `MarkMissedSeen()` and `MissedUnseen`).
    private(set) var history: HistorySink?
    private var sleep: SleepCoordinator?
    /// io.telwatch.Monitor1 (nil with --no-api).
    private let api: APIService?
    private var signalSource: SignalSource?
    /// What takes a reloaded configuration itself (SIGHUP), in the order they were made.
    private var reloading: [ReloadsOptions] = []
    private var serviceManager: ServiceManagerSink?
    private var pendingSync: Set<BackendKind>
    private let startedAt = monotonicNow()
    private var stopping = false
    /// Runs once, when every selected stack has synced (or is known to be absent).
    var onReady: (() -> Void)?
    private(set) var isReady = false
    /// The stacks last said to be not running (for the hint of a watch that has none to follow).
    private(set) var absentStacks: Set<BackendKind> = []
    /// The exit status once the session has ended.
    private(set) var exitStatus = ExitStatus.success.code
    /// Runs once everything is released after `stop`.
    var onFinished: (() -> Void)?

    init(options: WatchOptions, loop: EventLoop, connection: Connection, output: LineWriter) throws {
        self.options = options
        self.loop = loop
        self.connection = connection
        lockConnection = try Connection(connection.bus, loop: loop)
        lockConnection.onWarning = connection.onWarning
        pendingSync = Set(options.backend.kinds)
        // First: a second telwatch stops here, before it touches the run, the lock or the history.
        api = try APIService.start(options, watched: connection, loop: loop)
        var liveCalls: () -> Int = { 0 }
        pipeline = EventPipeline(liveCalls: { liveCalls() })

        warnings = WarningSink(verbosity: options.verbosity)
        pipeline.append(warnings)
        let contacts = ContactDirectory.forWatch(options, loop: loop)
        stream = OutputSink(output: output, json: options.json, verbosity: options.verbosity,
                            schema: EventSchema(redactNumbers: options.redactNumbers, contacts: contacts))
        pipeline.append(stream)
        // Readiness, status and the stop for a service manager (systemd's Type=notify): before the runs.
        serviceManager = try ServiceManagerSink.fromEnvironment(loop: loop)
        serviceManager.map(pipeline.append)

        // Always there, even with no hook configured (it costs nothing then), so that a reloaded
        // configuration can add some. Hooks write to telwatch's stderr: stdout belongs to the
        // event stream (`| jq`).
        hooks = HookRunner(loop: loop, settings: HookSettings(
            directory: options.hooksDirectory, commands: options.hookCommands, timeout: options.hookTimeout,
            stdout: .fd(2), stderr: .fd(2), coalescedEvents: [CallHookEvent.updated.rawValue]))
        // A run left open by a killed predecessor is reported (and its hooks run) as the run
        // manager starts: the sinks that show it are already in place.
        runs = try BGRunManager(loop: loop, lockBus: lockConnection, configuration: runConfiguration(),
                                hooks: hooks) { [weak self] event in self?.pipeline.send(.run(event)) }
        let telManager = TelManager(runs: runs)
        pipeline.append(telManager)
        // After the runs (the lock is asked for first), before the hooks: a ring waits for no spawn.
        var hangUp: (CallKey, @escaping (String?) -> Void) -> Void = { _, done in done("telwatch is not following the stacks") }
        screening = WatchScreening(path: options.screeningFile, verbose: options.verbosity == .verbose, loop: loop,
                                   contacts: contacts, localTime: WatchScreening.localTime, hangUp: { hangUp($0, $1) })
        let screener = screening.screener
        if let actions = PhoneActions.start(settings: options.actions, loop: loop, contacts: contacts,
                                                report: { warn($0) }) {
            actions.session = self
            pipeline.append(actions)
        }
        // Before the call hooks: a ring starts, and stops, before any hook of its event is queued.
        let scoped = ScopedCommandSink(loop: loop, settings: scopedSettings(options), runs: telManager,
                                       contacts: contacts, report: { warn($0) })
        scopedCommands = scoped
        scoped.session = self
        pipeline.append(scoped)
        if let api = api?.api {
            api.runs = runs
            api.session = self
            api.schema = stream.schema
            pipeline.append(api)
        }
        pipeline.append(CallHookSink(hooks: hooks, runs: telManager, contacts: contacts))
        // After the runs (an event's consequences are in its turn) and before the history, whose
        // disk writes come after the turn's messages are out (docs/ARCHITECTURE.md, "MQTT").
        if let settings = try options.mqtt.settings() {
            mqtt = MQTTSink(settings: settings, schema: stream.schema, loop: loop,
                            stateDirectory: runs?.stateStore?.directory, report: { warn($0) })
            mqtt?.countsBlockedCalls = options.screeningFile != nil
            mqtt?.countsMissedCalls = options.history
            mqtt?.session = self
            mqtt.map(pipeline.append)
        }
        // Whether or not the history is on: a call outlives its telwatch, and keeps its id
        // (docs/modem-stacks.md §1.8).
        var remembered: [RememberedCall] = []
        if let file = runs?.stateStore?.liveCallsRecord {
            let left = RecordFile.text(file.path) ?? ""
            remembered = LiveCallsRecord.decode(left, since: bootWallClock())
            let recorder = LiveCallRecorder(file: file, left: left, loop: loop, report: { warn($0) })
            recorder.session = self
            pipeline.append(recorder)
        }
        if let history = historySink() {
            self.history = history
            history.session = self
            pipeline.append(history)
        }

        let monitor = CallMonitor(connection: connection, backends: options.backend, onEvents: { [weak self] events in
            guard let self else { return }
            let now = wallClockNow()
            // Decided before the pipeline sees the events: no sink starts a ring the rules hold back.
            let screened = screener.screen(events, now: now)
            self.pipeline.send(.calls(screener.unmissed(events), time: now))
            for decision in screened { self.pipeline.send(.screened(decision, time: now)) }
            screener.delivered(events)
            self.armWithheld()
        }, onNotice: { [weak self] notice in self?.noticed(notice) })
        monitor.remembered = remembered
        self.monitor = monitor
        withheldTimer = try loop.timer { [weak self] in self?.numberlessDue() }
        hangUp = { [unowned monitor] key, done in monitor.hangUp(key, done: done) }
        screener.onHangupFailed = { [weak self] failed in
            warn("screening: the stack did not hang up call \(failed.call.id.prefix(8)) (\(failed.decision.ruleText)): "
                 + "\(failed.hangup?.failure ?? "?"); it rings")
            self?.pipeline.send(.screened(failed, time: wallClockNow()))
        }
        liveCalls = { [unowned monitor] in monitor.liveCallCount }
        hooks.onOutcome = { [weak self] outcome in self?.pipeline.send(.hook(outcome)) }
        // The reader is gone (`telwatch | head`): stop once this event has been delivered.
        stream.onBroken = { [weak self] in self?.loop.soon { self?.stop(status: ExitStatus.success.code) } }
        reloading = [warnings, stream, hooks, scoped, screening] + ([api?.api, mqtt] as [ReloadsOptions?]).compactMap { $0 }
        // Its lines go out in the turn's print phase (docs/ARCHITECTURE.md, "A turn").
        stream.holdLinesForEachTurn(of: loop)
    }

    /// History lives in this telwatch's own state directory: its instance lock keeps a second
    /// telwatch from closing the first one's live calls as unknown.
    private func historySink() -> HistorySink? {
        guard options.history else { return nil }
        guard let directory = runs?.stateStore?.directory else {
            warn("history: off: telwatch has no usable state directory to keep it in")
            return nil
        }
        return HistorySink(settings: HistorySettings(directory: directory, keep: options.historyKeep), loop: loop,
                           report: { warn($0) })
    }

    /// Call-scoped commands write where hooks do (stderr) and get the run command's grace.
    private func scopedSettings(_ options: WatchOptions) -> ScopedCommandSettings {
        ScopedCommandSettings(commands: options.whileCommands, grace: options.stopGrace, stdout: .fd(2), stderr: .fd(2))
    }

    private func runConfiguration() -> RunConfiguration {
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
        return configuration
    }

    /// Follows the stacks until SIGINT/SIGTERM, a lost bus, or a closed stdout.
    func start() throws {
        signalSource = try loop.signals([SIGINT, SIGTERM, SIGUSR1, SIGHUP]) { [weak self] signal in
            guard let self else { return }
            switch signal {
            case SIGUSR1: self.sendStats(.stats)
            case SIGHUP: self.reload()
            default: self.stop(status: ExitStatus.success.code)
            }
        }
        for bus in [connection, lockConnection] + [api?.ownConnection].compactMap({ $0 }) {
            bus.onDisconnect = { [weak self] in
                guard let self, !self.stopping else { return }
                warn("lost the \(self.options.bus) bus; stopping (a supervisor should restart telwatch)")
                self.monitor.connectionLost()
                self.stop(status: ExitStatus.busUnavailable.code)
            }
        }
        try monitor.start()
        // After the backends: a resume then finds them started, ready to resync.
        sleep = try SleepCoordinator(
            connection: lockConnection, runs: runs,
            settings: SleepSettings(delayLock: options.sleepDelayLock, resumeGrace: options.resumeGrace),
            onEvent: { [weak self] event in self?.pipeline.send(.sleep(event)) },
            onResume: { [weak self] in self?.monitor.resync() })
    }

    var decodedSignals: UInt64 { monitor.decodedSignals }
    var isRunHeld: Bool { runs?.isRunning ?? false }

    /// Ends the live run (lock released, run command stopped, children reaped), then finishes.
    func stop(status: Int32) {
        guard !stopping else { return }
        stopping = true
        exitStatus = status
        sleep?.stop()
        monitor.stop()
        // A ring ends now, not once the run's hooks have been waited for (the pipeline's order).
        scopedCommands?.finish {}
        pipeline.finish { [weak self] in
            guard let self else { return }
            self.sendStats(.exit)
            self.stream.flush()
            self.signalSource?.cancel()
            self.api?.ownConnection?.close()
            self.serviceManager?.stopped()
            self.onFinished?()
        }
    }

    /// SIGHUP, the daemon convention: the config file is read again and what can change while
    /// running does (hooks, their timeout, verbosity, redaction); the live run goes on untouched.
    /// A setting that shapes the run or the bus waits for the next start, and says so. A config
    /// file that no longer parses changes nothing.
    private func reload() {
        let new: WatchOptions
        do {
            guard let parsed = try reloadOptions() else { return warn("SIGHUP: nothing to reload") }
            new = parsed
        } catch {
            return warn("SIGHUP: the configuration was not reloaded, nothing changed: \(error)")
        }
        let schema = new.schema(contacts: stream.schema.contacts)
        for part in reloading { part.reload(new, schema: schema) }
        let waiting = options.settingsNeedingARestart(comparedWith: new)
        if new.verbosity != .quiet {
            // Done as asked: news, not a problem (the journal's warning priority is for problems).
            warn("reloaded the configuration" + (waiting.isEmpty ? ""
                : "; these take effect at the next start: " + waiting.joined(separator: ", ")),
                 priority: waiting.isEmpty ? .info : .notice)
        }
    }

    /// The exceptions (`except repeat`, `except called`) and the emergency hour look back past
    /// this start: the calls of the history within their window are told to the screener once,
    /// after `ready` (the start's sync costs nothing more). A history that cannot be read is one
    /// line: the exceptions then know the calls from now on.
    private func seedScreening() {
        guard let lookBack = screening.screener.lookBack, let path = history?.path else { return }
        do {
            // On the loop's thread: another program's lock costs it at most what the history's own writes may.
            guard let reader = try HistoryReader(path: path, busyTimeout: HistorySettings.loopBusyTimeout) else { return }
            let rows = try reader.calls(HistoryQuery(since: wallClockNow() - lookBack, limit: CallScreener.seedLimit))
            screening.screener.seed(rows.reversed().compactMap { row in
                guard let direction = CallDirection(rawValue: row.direction), !row.initial else { return nil }
                return (row.number, direction, row.firstSeen)
            })
        } catch {
            warn("screening: the history cannot be read for the exceptions (\(error)); they know the calls from now on")
        }
    }

    // MARK: SinkSession: what the sinks may ask

    var liveCalls: [CallSnapshot] { monitor?.liveCalls ?? [] }

    func screening(of callID: String) -> ScreeningAction? { screening.screener.action(for: callID) }

    func send(_ event: PipelineEvent) { pipeline.send(event) }

    /// Stops a live call's ring at the user's word (D-Bus `Silence`, MQTT `silence`): screening's
    /// `silence`, said with a `screened` event (rule `user`) as a rule's would be.
    func silence(callID: String) -> SilenceOutcome {
        let outcome = screening.screener.silence(monitor.liveCalls.first { $0.id == callID })
        if case .silenced(let decision) = outcome { pipeline.send(.screened(decision, time: wallClockNow())) }
        return outcome
    }

    /// The timer follows the screener's deadline: armed for the oldest numberless call, off when none.
    private func armWithheld() {
        guard let deadline = screening.screener.withheldDeadline else {
            if withheldTimer?.isArmed == true { withheldTimer?.cancel() }
            return
        }
        withheldTimer?.schedule(after: deadline - wallClockNow())
    }

    private func numberlessDue() {
        let now = wallClockNow()
        for decision in screening.screener.screenNumberless(now: now) { pipeline.send(.screened(decision, time: now)) }
        armWithheld()
    }

    private func noticed(_ notice: BackendNotice) {
        let now = wallClockNow()
        if case .emergencyNumbers(let kind, let modem, let numbers) = notice {
            screening.screener.stackListed(numbers, modem: kind.rawValue + " " + modem)
        }
        pipeline.send(.backend(notice, time: now))
        switch notice {
        case .serviceAbsent(let kind), .serviceVanished(let kind, _): absentStacks.insert(kind)
        case .serviceAppeared(let kind, _): absentStacks.remove(kind)
        default: break
        }
        switch notice {
        case .synced(let kind, _, _), .serviceAbsent(let kind), .syncRefused(let kind, _), .syncFailed(let kind, _):
            pendingSync.remove(kind)
        default: break
        }
        if pendingSync.isEmpty && !isReady {
            isReady = true
            pipeline.send(.ready(time: now))
            onReady?()
            loop.soon { [weak self] in self?.seedScreening() }
        }
    }

    private func sendStats(_ occasion: ServiceStats.Occasion) {
        pipeline.send(.stats(ServiceStats(occasion: occasion, time: wallClockNow(), signals: monitor.decodedSignals,
                                          uptime: monotonicNow() - startedAt)))
    }
}
