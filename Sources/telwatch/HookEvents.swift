import BGRunManager
import Glibc
import Pipeline

/// The events that run hooks (`DIR/EVENT`, `DIR/EVENT.d/*`, `hook.EVENT = …`), in the order
/// `telwatch(1)` lists them, each with what it means there.
enum HookEvents {
    static let names = CallHookEvent.allCases.map(\.rawValue) + RunHookEvent.allCases.map(\.rawValue)

    static let meanings: [(name: String, meaning: String)] =
        CallHookEvent.allCases.map { ($0.rawValue, meaning(of: $0)) } + RunHookEvent.allCases.map { ($0.rawValue, meaning(of: $0)) }

    private static func meaning(of event: CallHookEvent) -> String {
        switch event {
        case .incoming: return "a call rings"
        case .dialing: return "an outgoing call is placed"
        case .connected: return "a call is answered"
        case .disconnected: return "a call ended"
        case .missed: return "a call rang and ended unanswered"
        case .updated: return "a live call changed (held, waiting, multiparty…)"
        case .screened: return "call screening decided about a call (--screening, or Silence)"
        case .acted: return "an act asked from afar (answer, hang up, deflect, tones, dial) was done or refused"
        }
    }

    private static func meaning(of event: RunHookEvent) -> String {
        switch event {
        case .started: return "the first call began a run"
        case .stopped: return "the last call ended the run (or it was one a killed telwatch left)"
        case .expired: return "the run's lease ran out"
        }
    }
}
