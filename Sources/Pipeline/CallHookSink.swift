import BGRunManager
import CallMonitor
import Contacts
import Loop
import Processes

/// Runs the hooks of every call event (run hooks are the run manager's). A call's hooks run under
/// its id as ordering key, so one call's hooks run in order while different calls' run side by
/// side. Their environment: `TELWATCH_EVENT` (incoming, dialing, connected, disconnected, missed,
/// updated, screened) and the call's variables (`CallEnvironment`); a `screened` hook also gets
/// `TELWATCH_SCREENED` (the action) and `TELWATCH_SCREENING_RULE`.
public final class CallHookSink: EventSink {
    private let hooks: HookRunner
    private let runs: TelManager?
    private let contacts: ContactDirectory?
    private var isFinishing = false

    /// `runs` tells which run a call held; it must come before this sink in the pipeline.
    public init(hooks: HookRunner, runs: TelManager?, contacts: ContactDirectory? = nil) {
        self.hooks = hooks
        self.runs = runs
        self.contacts = contacts
    }

    public func receive(_ event: PipelineEvent, liveCalls: Int) {
        guard !isFinishing, hooks.mayHaveHooks else { return }
        if case .screened(let screened, _) = event {
            // Under the call's id: after the hooks of the event that made its number known.
            return run(.screened, screened.call, previous: screened.call.state, liveCalls: liveCalls, extra: [
                ("TELWATCH_SCREENED", screened.action.rawValue),
                ("TELWATCH_SCREENING_RULE", screened.decision.ruleText),
            ])
        }
        guard case .calls(let events, _) = event else { return }
        // A `missed` tells the state the call was in before its `disconnected` of the same batch.
        var endedFrom: [String: CallState?] = [:]
        for event in events {
            switch event {
            case .transition(let call, let previous):
                if call.state == .disconnected { endedFrom[call.id] = previous }
                run(CallHookEvent(call.state), call, previous: previous, liveCalls: liveCalls)
            case .updated(let call):
                run(.updated, call, previous: call.state, liveCalls: liveCalls)
            case .missed(let call):
                run(.missed, call, previous: endedFrom[call.id] ?? nil, liveCalls: liveCalls)
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

    private func run(_ event: CallHookEvent, _ call: CallSnapshot, previous: CallState?, liveCalls: Int,
                     extra: [(name: String, value: String)] = []) {
        hooks.run(event: event.rawValue, key: call.id, variables: CallEnvironment.variables(
            of: call, previous: previous, liveCalls: liveCalls, runID: runs?.runID(heldBy: call.id),
            contact: contacts?.name(for: call.number)) + extra)
    }
}
