/// The state of a run's inhibitor lock, as events, the run record and hooks (`TELWATCH_LOCK`) say it.
public enum LockState: String, Equatable, Sendable {
    /// The run holds no lock: none is configured.
    case off
    /// Asked for; logind has not answered yet.
    case pending
    case held
    /// Wanted, but nothing is inhibited (no logind, a refusal, a lost bus).
    case unavailable
    /// Given back: the run ended.
    case released
}
