/// Where a backend says a call is now (already mapped from raw backend values by StateMapping).
public enum CallPhase: Equatable, Sendable {
    /// A live call. `state` is never `.disconnected` here; if it is anyway, the tracker
    /// treats it as `.ended`.
    case live(CallState, CallDetail)
    /// MM TERMINATED, oFono "disconnected".
    case ended
    /// A raw value we do not know: kept verbatim, never a transition.
    case unknown(String)
}
