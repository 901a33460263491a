import BGRunManager
import CallMonitor
import Contacts
import Loop
import Processes

/// Runs the hooks of every call event (run hooks are the run manager's). A call's hooks run under
/// its id as ordering key, so one call's hooks run in order while different calls' run side by
/// side. Their environment: `TELWATCH_EVENT` (incoming, dialing, connected, disconnected, missed,
/// updated, screened, acted) and the call's variables (`CallEnvironment`); a `screened` hook also gets
/// `TELWATCH_SCREENED` (the action) and `TELWATCH_SCREENING_RULE`, an `acted` hook `TELWATCH_ACT`,
/// `TELWATCH_ACT_BY`, `TELWATCH_ACT_RESULT` and `TELWATCH_ACT_NUMBER`.
public final class CallHookSink: EventSink {
    private let hooks: HookRunner
    private var isFinishing = false
    /// Asked which run a call held (`TelManager`'s word, which comes before this sink).
    private weak var session: SinkSession?

    public init(hooks: HookRunner, session: SinkSession) {
        self.hooks = hooks
        self.session = session
    }

    public func receive(_ delivery: Delivery) {
        guard !isFinishing, hooks.mayHaveHooks else { return }
        let liveCalls = delivery.liveCalls
        if case .screened(let screened, _) = delivery.event {
            // Under the call's id: after the hooks of the event that made its number known.
            return run(.screened, screened.call, previous: screened.call.state, liveCalls: liveCalls,
                       contact: delivery.contact(of: screened.call.number), extra: [
                ("TELWATCH_SCREENED", screened.action.rawValue),
                ("TELWATCH_SCREENING_RULE", screened.decision.ruleText),
            ])
        }
        if case .acted(let acted, _) = delivery.event { return run(acted, liveCalls: liveCalls, delivery: delivery) }
        guard case .calls(let events, _) = delivery.event else { return }
        // A `missed` tells the state the call was in before its `disconnected` of the same batch.
        var endedFrom: [String: CallState?] = [:]
        for event in events {
            switch event {
            case .transition(let call, let previous):
                if call.state == .disconnected { endedFrom[call.id] = previous }
                run(CallHookEvent(call.state), call, previous: previous, liveCalls: liveCalls,
                    contact: delivery.contact(of: call.number))
            case .updated(let call):
                run(.updated, call, previous: call.state, liveCalls: liveCalls, contact: delivery.contact(of: call.number))
            case .missed(let call):
                run(.missed, call, previous: endedFrom[call.id] ?? nil, liveCalls: liveCalls,
                    contact: delivery.contact(of: call.number))
            case .busy, .idle, .announced, .withdrawn:
                break
            }
        }
    }

    /// An `acted` hook: the act's variables, and the call's when there is one (under its id, after
    /// its own events' hooks); a dial refused before any call was made has only the act's.
    private func run(_ acted: ActedCall, liveCalls: Int, delivery: Delivery) {
        let act: [(name: String, value: String)] = [
            ("TELWATCH_ACT", acted.kind.rawValue),
            ("TELWATCH_ACT_BY", acted.requester.rawValue),
            ("TELWATCH_ACT_RESULT", acted.result),
            ("TELWATCH_ACT_NUMBER", acted.number ?? ""),
        ]
        guard let call = acted.call else {
            hooks.run(event: CallHookEvent.acted.rawValue, key: CallHookSink.hookKey(of: acted.callID ?? ""),
                      variables: act + [("TELWATCH_CALL_ID", acted.callID ?? ""), ("TELWATCH_LIVE_CALLS", String(liveCalls))])
            return
        }
        run(.acted, call, previous: call.state, liveCalls: liveCalls, contact: delivery.contact(of: call.number), extra: act)
    }

    /// A call's hooks wait in a line of their own, apart from every other call's and the run's.
    public static func hookKey(of callID: String) -> HookKey { HookKey(CallHookSink.self, callID) }

    /// No call hook starts after this; `done` runs once every hook has finished. The run
    /// manager, finished before this sink, already waited for them within its bound.
    public func finish(then done: @escaping () -> Void) {
        isFinishing = true
        hooks.whenIdle(done)
    }

    private func run(_ event: CallHookEvent, _ call: CallSnapshot, previous: CallState?, liveCalls: Int,
                     contact: String?, extra: [(name: String, value: String)] = []) {
        hooks.run(event: event.rawValue, key: CallHookSink.hookKey(of: call.id), variables: CallEnvironment.variables(
            of: call, previous: previous, liveCalls: liveCalls, runID: session?.runID(heldBy: call.id),
            contact: contact) + extra)
    }
}
