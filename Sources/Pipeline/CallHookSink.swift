import BGRunManager
import CallMonitor
import Loop

/// Runs the hooks of every call event (run hooks are the run manager's). A call's hooks run under
/// its id as ordering key, so one call's hooks run in order while different calls' run side by
/// side. Their environment:
/// `TELWATCH_EVENT` (incoming, dialing, connected, disconnected, missed, updated),
/// `TELWATCH_CALL_ID`, `TELWATCH_STATE`, `TELWATCH_PREVIOUS_STATE` ("" at first sight),
/// `TELWATCH_DETAIL` (ringing, waiting, dialing, alerting, active, held; "" once disconnected),
/// `TELWATCH_DIRECTION`, `TELWATCH_NUMBER`, `TELWATCH_NAME`, `TELWATCH_REASON`,
/// `TELWATCH_BACKEND`, `TELWATCH_MODEM`, `TELWATCH_PATH`, `TELWATCH_INITIAL` and
/// `TELWATCH_MISSED`, `TELWATCH_MULTIPARTY` and `TELWATCH_RESUMED` (`true`/`false`; resumed: learned by
/// the resync after a resume, not as it happened), `TELWATCH_LIVE_CALLS` (after the event),
/// `TELWATCH_RUN_ID` (the run the call holds or held; "" for none), `TELWATCH_TIME` (epoch seconds).
public final class CallHookSink: EventSink {
    private let hooks: HookRunner
    private let runs: TelManager?
    private var isFinishing = false

    /// `runs` tells which run a call held; it must come before this sink in the pipeline.
    public init(hooks: HookRunner, runs: TelManager?) {
        self.hooks = hooks
        self.runs = runs
    }

    public func receive(_ event: PipelineEvent, liveCalls: Int) {
        guard case .calls(let events, _) = event, !isFinishing, hooks.mayHaveHooks else { return }
        // A `missed` tells the state the call was in before its `disconnected` of the same batch.
        var endedFrom: [String: CallState?] = [:]
        for event in events {
            switch event {
            case .transition(let call, let previous):
                if call.state == .disconnected { endedFrom[call.id] = previous }
                run(call.state.rawValue, call, previous: previous, liveCalls: liveCalls)
            case .updated(let call):
                run("updated", call, previous: call.state, liveCalls: liveCalls)
            case .missed(let call):
                run("missed", call, previous: endedFrom[call.id] ?? nil, liveCalls: liveCalls)
            case .busy, .idle, .announced, .withdrawn:
                break
            }
        }
    }

    /// No call hook starts after this; `done` runs once every hook has finished. The run
    /// manager, finished before this sink, already waited for them within its bound.
    public func finish(then done: @escaping () -> Void) {
        isFinishing = true
        hooks.whenIdle(done)
    }

    private func run(_ event: String, _ call: CallSnapshot, previous: CallState?, liveCalls: Int) {
        hooks.run(event: event, key: call.id, variables: [
            ("TELWATCH_CALL_ID", call.id),
            ("TELWATCH_STATE", call.state.rawValue),
            ("TELWATCH_PREVIOUS_STATE", previous?.rawValue ?? ""),
            ("TELWATCH_DETAIL", call.detail?.rawValue ?? ""),
            ("TELWATCH_DIRECTION", call.direction.rawValue),
            ("TELWATCH_NUMBER", call.number),
            ("TELWATCH_NAME", call.name),
            ("TELWATCH_REASON", call.reason ?? ""),
            ("TELWATCH_BACKEND", call.key.backend.rawValue),
            ("TELWATCH_MODEM", call.modem),
            ("TELWATCH_PATH", call.key.path),
            ("TELWATCH_INITIAL", call.initial ? "true" : "false"),
            ("TELWATCH_MISSED", call.missed ? "true" : "false"),
            ("TELWATCH_MULTIPARTY", call.multiparty ? "true" : "false"),
            ("TELWATCH_RESUMED", call.resumed ? "true" : "false"),
            ("TELWATCH_LIVE_CALLS", String(liveCalls)),
            ("TELWATCH_RUN_ID", runs?.runID(heldBy: call.id) ?? ""),
            ("TELWATCH_TIME", formatSeconds(wallClockNow())),
        ])
    }
}
