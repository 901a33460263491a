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

/// The sinks, in pipeline order: every event reaches them in this order (docs/ARCHITECTURE.md,
/// "The pipeline", says why each is where it is; a test checks that its diagram lists these rows
/// in this order). A new sink is its file and its row here, plus its options' rows in the option
/// table, in the group the row names (`--help` lists each sink's options together, in this order).
enum WatchSinks {
    static var table: [SinkRow] { [
        // A problem is on stderr before anything else happens about it.
        SinkRow("WarningSink", needsRuns: false) { WarningSink(verbosity: $0.options.verbosity) },
        // The event stream shows an event before its consequences.
        SinkRow("OutputSink", phase: .print, options: .output, needsRuns: false) { parts in
            OutputSink(output: parts.output, json: parts.options.json, verbosity: parts.options.verbosity,
                       schema: parts.options.schema, onBroken: parts.readerGone)
        },
        // Readiness, status and the stop for a service manager (systemd's Type=notify): before the runs.
        SinkRow("ServiceManagerSink", needsRuns: false) { try ServiceManagerSink.fromEnvironment(loop: $0.loop) },
        SinkRow("TelManager", options: .runs) { TelManager(runs: $0.runs) },
        // After the runs (the lock is asked for first), before the hooks: a ring waits for no spawn.
        SinkRow("PhoneActions", options: .phoneActions) { parts in
            PhoneActions.start(settings: parts.options.actions, loop: parts.loop, session: parts.session,
                               report: { warn($0) })
        },
        // Before the call hooks: a ring starts, and stops, before any hook of its event is queued.
        SinkRow("ScopedCommandSink", options: .callCommands) { parts in
            ScopedCommandSink(loop: parts.loop, settings: scopedSettings(parts.options), contacts: parts.contacts,
                              session: parts.session, report: { warn($0) })
        },
        SinkRow("MonitorAPI", options: .api) { parts in
            try parts.api.map {
                try MonitorAPI(connection: $0.connection, schema: parts.options.schema, version: version,
                               session: parts.session)
            }
        },
        SinkRow("CallHookSink", options: .hooks) { CallHookSink(hooks: $0.hooks, session: $0.session) },
        // After the runs (an event's consequences are in its turn) and before the history, whose
        // disk writes come after the turn's messages are out.
        SinkRow("MQTTSink", phase: .publish, options: .mqtt) { parts in
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
        SinkRow("HistorySink", phase: .persist, options: .history, make: historySink),
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
