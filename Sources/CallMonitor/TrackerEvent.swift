public enum TrackerEvent: Sendable, Equatable {
    /// The call's state or detail changed. `previous` nil = first sight of the call.
    case transition(CallSnapshot, previous: CallState?)
    /// Only number/name/multiparty (or an unknown direction becoming known) changed; state same.
    case updated(CallSnapshot)
    /// An incoming call ended without ever connecting.
    case missed(CallSnapshot)
    /// The first live call appeared (aggregate edge: live-call count 0 → 1).
    case busy(CallSnapshot)
    /// The last live call ended (aggregate edge: live-call count 1 → 0).
    case idle(CallSnapshot)
    /// A new call object whose state is still being read: a live call by the stack's account.
    /// `id` is the call's id from now on: its first `transition` carries it once the call is
    /// read, or `withdrawn` if it never becomes a call.
    case announced(CallKey, id: String)
    /// An announced call object went (deleted, unreadable, its stack gone) without becoming a call.
    case withdrawn(CallKey, id: String)

    /// The call the event is about; nil for an announcement, which has no snapshot yet.
    public var call: CallSnapshot? {
        switch self {
        case .transition(let call, _), .updated(let call), .missed(let call), .busy(let call), .idle(let call):
            return call
        case .announced, .withdrawn:
            return nil
        }
    }
}
