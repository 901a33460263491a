import BGRunManager
import CallMonitor
import Contacts
import History
import Loop
import MQTTExport
import MonitorAPI
import PhoneActions
import Pipeline
import Processes

/// What a sink of the watch pipeline is made from: the options, the session's parts (made
/// before any sink) and the session's questions (`SinkSession`), which every sink gets as it is
/// made. Nothing is handed to a sink after that.
struct SinkParts {
    let options: WatchOptions
    let loop: EventLoop
    /// stdout, for the event stream.
    let output: LineWriter
    let contacts: ContactDirectory?
    let hooks: HookRunner
    /// The run manager (nil when it could not start); its state directory holds the outbox, the
    /// live calls' record and the history.
    let runs: BGRunManager?
    /// The D-Bus API's connection, its name already claimed; nil with `--no-api`.
    let api: APIService?
    /// The live calls' record as this telwatch found it (what an earlier one left).
    let liveCallsLeft: String
    let session: SinkSession
    /// The reader of stdout went away (`telwatch | head`): the session stops.
    let readerGone: () -> Void

    var stateDirectory: String? { runs?.stateStore?.directory }
}

/// One sink of the watch pipeline: its type's name (as docs/ARCHITECTURE.md's diagram says it),
/// the turn phase its output belongs to (nil: it acts as events arrive), whether it needs the run
/// manager, and how it is made (nil: off with these options). How it takes a reloaded
/// configuration is its own `ReloadsOptions` conformance (SinkReload.swift), if it has one.
struct SinkRow {
    let name: String
    let phase: TurnPhase?
    /// Made once the run manager has started. The run manager starts just before the first
    /// such row: a run left open by a killed predecessor is shown by the sinks above it.
    let needsRuns: Bool
    let make: (SinkParts) throws -> EventSink?

    init(_ name: String, phase: TurnPhase? = nil, needsRuns: Bool = true, make: @escaping (SinkParts) throws -> EventSink?) {
        self.name = name
        self.phase = phase
        self.needsRuns = needsRuns
        self.make = make
    }
}

/// The sinks, in pipeline order: every event reaches them in this order (docs/ARCHITECTURE.md,
/// "The pipeline", says why each is where it is; a test checks that its diagram lists these rows
/// in this order). A new sink is its file and its row here, plus its options' rows in the option
/// table.
enum WatchSinks {
    static var table: [SinkRow] { [
        // A problem is on stderr before anything else happens about it.
        SinkRow("WarningSink", needsRuns: false) { WarningSink(verbosity: $0.options.verbosity) },
        // The event stream shows an event before its consequences.
        SinkRow("OutputSink", phase: .print, needsRuns: false) { parts in
            OutputSink(output: parts.output, json: parts.options.json, verbosity: parts.options.verbosity,
                       schema: parts.options.schema, onBroken: parts.readerGone)
        },
        // Readiness, status and the stop for a service manager (systemd's Type=notify): before the runs.
        SinkRow("ServiceManagerSink", needsRuns: false) { try ServiceManagerSink.fromEnvironment(loop: $0.loop) },
        SinkRow("TelManager") { TelManager(runs: $0.runs) },
        // After the runs (the lock is asked for first), before the hooks: a ring waits for no spawn.
        SinkRow("PhoneActions") { parts in
            PhoneActions.start(settings: parts.options.actions, loop: parts.loop, session: parts.session,
                               report: { warn($0) })
        },
        // Before the call hooks: a ring starts, and stops, before any hook of its event is queued.
        SinkRow("ScopedCommandSink") { parts in
            ScopedCommandSink(loop: parts.loop, settings: scopedSettings(parts.options), contacts: parts.contacts,
                              session: parts.session, report: { warn($0) })
        },
        SinkRow("MonitorAPI") { parts in
            try parts.api.map {
                try MonitorAPI(connection: $0.connection, schema: parts.options.schema, version: version,
                               session: parts.session)
            }
        },
        SinkRow("CallHookSink") { CallHookSink(hooks: $0.hooks, session: $0.session) },
        // After the runs (an event's consequences are in its turn) and before the history, whose
        // disk writes come after the turn's messages are out.
        SinkRow("MQTTSink", phase: .publish) { parts in
            try parts.options.mqtt.settings().map {
                MQTTSink(settings: $0, schema: parts.options.schema, loop: parts.loop,
                         stateDirectory: parts.stateDirectory, countsBlockedCalls: parts.options.screeningFile != nil,
                         countsMissedCalls: parts.options.history, session: parts.session, report: { warn($0) })
            }
        },
        // Whether or not the history is on: a call outlives its telwatch, and keeps its id
        // (docs/modem-stacks.md §1.8).
        SinkRow("LiveCallRecorder", phase: .persist) { parts in
            (parts.runs?.stateStore?.liveCallsRecord).map {
                LiveCallRecorder(file: $0, left: parts.liveCallsLeft, loop: parts.loop, session: parts.session,
                                 report: { warn($0) })
            }
        },
        SinkRow("HistorySink", phase: .persist, make: historySink),
    ] }

    /// Call-scoped commands write where hooks do (stderr) and get the run command's grace.
    private static func scopedSettings(_ options: WatchOptions) -> ScopedCommandSettings {
        ScopedCommandSettings(commands: options.whileCommands, grace: options.stopGrace, stdout: .fd(2), stderr: .fd(2))
    }

    /// History lives in this telwatch's own state directory: its instance lock keeps a second
    /// telwatch from closing the first one's live calls as unknown.
    private static func historySink(_ parts: SinkParts) -> EventSink? {
        guard parts.options.history else { return nil }
        guard let directory = parts.stateDirectory else {
            warn("history: off: telwatch has no usable state directory to keep it in")
            return nil
        }
        return HistorySink(settings: HistorySettings(directory: directory, keep: parts.options.historyKeep),
                           loop: parts.loop, report: { warn($0) })
    }
}
