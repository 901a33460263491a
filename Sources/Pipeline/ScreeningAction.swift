public enum ScreeningAction: String, Sendable, CaseIterable {
    /// Hung up at the stack; it never rings.
    case reject
    /// Sent on unanswered (voicemail, another phone) at the stack; it never rings here.
    case deflect
    /// It does not ring; a missed-call notification is quiet.
    case silence
    /// It does not ring and nothing is notified: only the event stream and the history know.
    case ignore
    /// It rings as any call does.
    case allow

    /// Whether the phone rings for a call so screened.
    public var rings: Bool { self == .allow }
    /// Whether an unanswered call so screened is a missed call: a rejected, deflected or ignored
    /// one is not (docs/screening.md); a silenced one is, quietly.
    public var countsAsMissed: Bool { self == .allow || self == .silence }
}
