import BGRunManager
import CallMonitor
import Contacts
import Loop
import Processes

/// Runs the hooks of every call event (run hooks are the run manager's). A call's hooks run under
/// its id as ordering key, so one call's hooks run in order while different calls' run side by
/// side. Their environment: `TELWATCH_EVENT` (incoming, dialing, connected, disconnected, missed,
/// updated, screened) and the call's variables (`CallEnvironment`); a `screened` hook also gets
/// `TELWATCH_SCREENED` (the action), `TELWATCH_SCREENING_RULE`, `TELWATCH_SCREENING_COMMAND` and
/// `TELWATCH_DEFLECT_TO`. It also runs a `run NAME` screening rule's command, with that environment.
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
        guard !isFinishing else { return }
        let liveCalls = delivery.liveCalls
        if case .screened(let screened, _) = delivery.event {
            let extra = [
                ("TELWATCH_SCREENED", screened.action.rawValue),
                ("TELWATCH_SCREENING_RULE", screened.decision.ruleText),
                ("TELWATCH_SCREENING_COMMAND", screened.decision.command?.name ?? ""),
                ("TELWATCH_DEFLECT_TO", screened.decision.deflectTo ?? ""),
            ]
            if let command = screened.decision.command, screened.hangup == .requested {
                runCommand(command, of: screened, liveCalls: liveCalls, contact: delivery.contact(of: screened.call.number),
                           extra: extra)
            }
            guard hooks.mayHaveHooks else { return }
            // Under the call's id: after the hooks of the event that made its number known.
            return run(.screened, screened.call, previous: screened.call.state, liveCalls: liveCalls,
                       contact: delivery.contact(of: screened.call.number), extra: extra)
        }
        guard hooks.mayHaveHooks else { return }
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

    /// A call's hooks wait in a line of their own, apart from every other call's and the run's.
    public static func hookKey(of callID: String) -> HookKey { HookKey(CallHookSink.self, callID) }

    /// No call hook starts after this; `done` runs once every hook has finished. The run
    /// manager, finished before this sink, already waited for them within its bound.
    public func finish(then done: @escaping () -> Void) {
        isFinishing = true
        hooks.whenIdle(done)
    }

    /// A `run NAME` rule's command (the gate opener), once, as its call's rejection is first said:
    /// an argv with the environment a `screened` hook gets, in a line of its own so that no hook
    /// of the call delays it; its outcome is said as a hook's is.
    private func runCommand(_ command: ScreeningCommand, of screened: ScreenedCall, liveCalls: Int, contact: String?,
                            extra: [(name: String, value: String)]) {
        let call = screened.call
        hooks.run([command.arguments], event: CallHookEvent.screened.rawValue, key: HookKey(ScreeningCommand.self, call.id),
                  variables: CallEnvironment.variables(of: call, previous: call.state, liveCalls: liveCalls,
                                                       runID: session?.runID(heldBy: call.id), contact: contact) + extra)
    }

    private func run(_ event: CallHookEvent, _ call: CallSnapshot, previous: CallState?, liveCalls: Int,
                     contact: String?, extra: [(name: String, value: String)] = []) {
        hooks.run(event: event.rawValue, key: CallHookSink.hookKey(of: call.id), variables: CallEnvironment.variables(
            of: call, previous: previous, liveCalls: liveCalls, runID: session?.runID(heldBy: call.id),
            contact: contact) + extra)
    }
}
