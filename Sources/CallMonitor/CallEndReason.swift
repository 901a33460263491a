/// telwatch's own reasons, for ends no stack reports (docs/modem-stacks.md §1.3). The raw value
/// is the `reason` the event stream, the API and hooks carry; every other reason is the stack's
/// own word (`CallObservation.reason`), kept as it came.
public enum CallEndReason: String, Sendable, CaseIterable {
    /// The call object went away without a terminal state.
    case removed
    /// The stack's bus name lost its owner.
    case backendLost = "backend-lost"
    /// The call's modem went away.
    case modemRemoved = "modem-removed"
}
