/// Why a call is where it is: the stack's own word for its last change (ModemManager's
/// `StateReason`, oFono's `DisconnectReason`), kept as it came, or one of telwatch's own for the
/// ends no stack reports (docs/modem-stacks.md §1.3). It stays this enum up to the edges that print
/// it (`word`: the `reason` the event stream, the API, the hooks and the history carry).
public enum CallEndReason: Hashable, Sendable {
    /// The call object went away without a terminal state.
    case removed
    /// The stack's bus name lost its owner.
    case backendLost
    /// The call's modem went away.
    case modemRemoved
    /// The stack's own word (or, for a number it does not define, its decimal form).
    case stack(String)

    /// telwatch's own reasons.
    public static let own: [CallEndReason] = [.removed, .backendLost, .modemRemoved]

    /// A reason as the edges carry it: telwatch's own words are theirs (no stack uses them), any
    /// other is the stack's.
    public init(word: String) {
        self = CallEndReason.own.first { $0.word == word } ?? .stack(word)
    }

    /// The word the event stream, the API, the hooks and the history carry.
    public var word: String {
        switch self {
        case .removed: return "removed"
        case .backendLost: return "backend-lost"
        case .modemRemoved: return "modem-removed"
        case .stack(let word): return word
        }
    }
}
