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
/// the output is the same either way. The sinks and their order are `WatchSinks.table`'s
/// (docs/ARCHITECTURE.md, "The pipeline"): each is made from the options, the session's parts and
/// this session's questions (`SinkSession`), and the session keeps nothing of a sink but the list.
/// It hands a reloaded configuration to each part that takes one (`ReloadsOptions`).
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
    private let hooks: HookRunner
    /// Call screening (`--screening`): decides before the pipeline sees a call's events.
    private let screening: WatchScreening
    /// The monitor, for what is made before it: screening's hang-up and the live-call count.
    private let stacks = StackLink()
    /// Acts on calls for whoever asks (`act`, `dial`).
    private let acts: SessionActs
    /// Armed only while a ModemManager call rings in without a number: when it becomes a withheld caller.
    private var withheldTimer: TimerSource?
    /// Parses the options again (SIGHUP); nil when they cannot be read again.
    var reloadOptions: () throws -> WatchOptions? = { nil }
    private var monitor: CallMonitor?
    private var runs: BGRunManager?
    /// The sinks, in pipeline order, as `WatchSinks.table` made them.
    private var sinks: [EventSink] = []
    private var sleep: SleepCoordinator?
    /// io.telwatch.Monitor1's name, claimed first (nil with --no-api).
    private let api: APIService?
    private var signalSource: SignalSource?
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
        api = try APIService.claim(options, watched: connection, loop: loop)
        let contacts = ContactDirectory.forWatch(options, loop: loop)
        let stacks = self.stacks
        let pipeline = EventPipeline(liveCalls: { stacks.monitor?.liveCallCount ?? 0 }, schema: options.schema,
                                     contacts: contacts)
        self.pipeline = pipeline
        acts = try SessionActs(loop: loop, monitor: { stacks.monitor }, send: { [weak pipeline] in pipeline?.send($0) })
        // Always there, even with no hook configured (it costs nothing then), so that a reloaded
        // configuration can add some. Hooks write to telwatch's stderr: stdout belongs to the
        // event stream (`| jq`).
        let hookSettings = HookSettings(
            directory: options.hooksDirectory, commands: options.hookCommands, timeout: options.hookTimeout,
            stdout: .fd(2), stderr: .fd(2), coalescedEvents: [CallHookEvent.updated.rawValue])
        hooks = HookRunner(loop: loop, settings: hookSettings) { [weak pipeline] outcome in pipeline?.send(.hook(outcome)) }
        screening = WatchScreening(path: options.screeningFile, verbose: options.verbosity == .verbose, loop: loop,
                                   contacts: contacts, localTime: WatchScreening.localTime,
                                   onHangupFailed: { [weak pipeline] failed in
            warn("screening: " + (failed.failureText ?? "the stack refused call \(failed.call.id.prefix(8))"))
            pipeline?.send(.screened(failed, time: wallClockNow()))
        }, deflect: { key, number, done in
            guard let monitor = stacks.monitor else { return done(.stackGone) }
            monitor.act(.deflect(to: number), on: key) { done($0.failure) }
        }, hangUp: { key, done in
            guard let monitor = stacks.monitor else { return done("telwatch is not following the stacks") }
            monitor.hangUp(key, done: done)
        })

        var liveCallsLeft = ""
        for row in WatchSinks.table {
            if row.needsRuns && runs == nil { liveCallsLeft = try startRuns() }
            let parts = SinkParts(options: options, loop: loop, output: output, contacts: contacts, hooks: hooks,
                                  runs: runs, api: api, liveCallsLeft: liveCallsLeft, session: self,
                                  readerGone: { [weak self] in self?.readerGone() })
            guard let sink = try row.make(parts) else { continue }
            assert((sink as? LoopHook)?.phase == row.phase, "\(row.name): its row and its own turn hook disagree on its phase")
            sinks.append(sink)
            pipeline.append(sink)
        }

        let screener = screening.screener
        // Whether or not the history is on: a call outlives its telwatch, and keeps its id
        // (docs/modem-stacks.md §1.8).
        let remembered = LiveCallsRecord.decode(liveCallsLeft, since: bootWallClock())
        let monitor = CallMonitor(connection: connection, backends: options.backend, remembered: remembered,
                                  onEvents: { [weak self] events, now in
            guard let self else { return }
            // Decided before the pipeline sees the events: no sink starts a ring the rules hold back.
            let screened = screener.screen(events, now: now)
            self.pipeline.send(.calls(screener.unmissed(events), time: now))
            for decision in screened { self.pipeline.send(.screened(decision, time: now)) }
            self.acts.saw(events)
            screener.delivered(events)
            self.armWithheld()
        }, onNotice: { [weak self] notice in self?.noticed(notice) })
        self.monitor = monitor
        // A real cycle: the monitor delivers to screening, whose hang-up goes back to the monitor.
        stacks.monitor = monitor
        withheldTimer = try loop.timer { [weak self] in self?.numberlessDue() }
        // Its lines go out in the turn's print phase (docs/ARCHITECTURE.md, "A turn").
        sink(OutputSink.self)?.holdLinesForEachTurn(of: loop)
    }

    /// The run manager starts once the sinks that show its events are in place: a run left open
    /// by a killed predecessor is reported (and its hooks run) as it starts. Returns the live
    /// calls' record as an earlier telwatch left it.
    private func startRuns() throws -> String {
        let pipeline = self.pipeline
        runs = try BGRunManager(loop: loop, lockBus: lockConnection, configuration: WatchSession.runConfiguration(options),
                                hooks: hooks) { [weak pipeline] event in pipeline?.send(.run(event)) }
        return (runs?.stateStore?.liveCallsRecord).flatMap { RecordFile.text($0.path) } ?? ""
    }

    /// The sink of that type, if the table made one.
    private func sink<Sink: EventSink>(_ type: Sink.Type) -> Sink? {
        for sink in sinks { if let found = sink as? Sink { return found } }
        return nil
    }

    /// The reader is gone (`telwatch | head`): stop once this event has been delivered.
    private func readerGone() {
        loop.soon { [weak self] in self?.stop(status: ExitStatus.success.code) }
    }

    private static func runConfiguration(_ options: WatchOptions) -> RunConfiguration {
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
                self.monitor?.connectionLost()
                self.stop(status: ExitStatus.busUnavailable.code)
            }
        }
        try monitor?.start()
        // After the backends: a resume then finds them started, ready to resync.
        sleep = try SleepCoordinator(
            connection: lockConnection, runs: runs,
            settings: SleepSettings(delayLock: options.sleepDelayLock, resumeGrace: options.resumeGrace),
            onEvent: { [weak self] event in self?.pipeline.send(.sleep(event)) },
            onResume: { [weak self] in self?.monitor?.resync() })
    }

    var decodedSignals: UInt64 { monitor?.decodedSignals ?? 0 }
    var isRunHeld: Bool { runs?.isRunning ?? false }

    /// Ends the live run (lock released, run command stopped, children reaped), then finishes.
    func stop(status: Int32) {
        guard !stopping else { return }
        stopping = true
        exitStatus = status
        sleep?.stop()
        monitor?.stop()
        // A ring ends now, not once the run's hooks have been waited for (the pipeline's order).
        sink(ScopedCommandSink.self)?.finish {}
        pipeline.finish { [weak self] in
            guard let self else { return }
            self.sendStats(.exit)
            self.sink(OutputSink.self)?.flush()
            self.signalSource?.cancel()
            self.api?.ownConnection?.close()
            self.sink(ServiceManagerSink.self)?.stopped()
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
        let schema = new.schema
        pipeline.schema = schema
        // The sinks that take one, in pipeline order, then the hooks and screening.
        let parts = sinks.compactMap { $0 as? ReloadsOptions } + [hooks, screening]
        for part in parts { part.reload(new, schema: schema) }
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
        guard let lookBack = screening.screener.lookBack, let path = sink(HistorySink.self)?.path else { return }
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

    func runID(heldBy callID: String) -> String? { sink(TelManager.self)?.runID(heldBy: callID) }

    var liveRun: (id: String, holders: Int)? { runs?.run.map { ($0.id, runs?.holders.count ?? 0) } }

    var runRecord: RunRecord? { runs?.record }

    var stateDirectory: String? { runs?.stateStore?.directory }

    func screening(of callID: String) -> ScreeningAction? { screening.screener.action(for: callID) }

    func send(_ event: PipelineEvent) { pipeline.send(event) }

    func missedUnseen() -> Int? { sink(HistorySink.self)?.missedUnseen() }

    /// Stops a live call's ring at the user's word (D-Bus `Silence`, MQTT `silence`): screening's
    /// `silence`, said with a `screened` event (rule `user`) as a rule's would be.
    func silence(callID: String) -> SilenceOutcome {
        let outcome = screening.screener.silence(monitor?.liveCalls.first { $0.id == callID })
        if case .silenced(let decision) = outcome { pipeline.send(.screened(decision, time: wallClockNow())) }
        return outcome
    }

    func act(_ act: CallAct, on callID: String, by: ActRequester, done: @escaping (CallActReport) -> Void) {
        acts.act(act, on: callID, by: by, uid: nil, done: done)
    }

    func dial(_ number: String, modem: String?, by: ActRequester, done: @escaping (CallActReport) -> Void) {
        acts.dial(number, modem: modem, by: by, uid: nil, done: done)
    }

    func act(_ act: CallAct, on callID: String, by: ActRequester, uid: UInt32?,
             done: @escaping (CallActReport) -> Void) {
        acts.act(act, on: callID, by: by, uid: uid, done: done)
    }

    func dial(_ number: String, modem: String?, by: ActRequester, uid: UInt32?,
              done: @escaping (CallActReport) -> Void) {
        acts.dial(number, modem: modem, by: by, uid: uid, done: done)
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
        pipeline.send(.stats(ServiceStats(occasion: occasion, time: wallClockNow(), signals: decodedSignals,
                                          uptime: monotonicNow() - startedAt)))
    }
}

/// The monitor, for the parts made before it that need it: screening hangs up through it, and
/// the pipeline stamps each event with its count of live calls. Set once, as the monitor is made.
private final class StackLink {
    weak var monitor: CallMonitor?
}
