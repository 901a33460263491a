import CallMonitor

/// The call events that run hooks (`DIR/incoming`, `hook.incoming = …`), named as on the event
/// stream. The run's are `BGRunManager.RunHookEvent`.
public enum CallHookEvent: String, CaseIterable, Sendable {
    case incoming, dialing, connected, disconnected, missed, updated, screened
    /// An act on a call (or a dial) asked from afar, done or refused (`ActedCall`).
    case acted

    /// The event of a call's move into `state`.
    public init(_ state: CallState) {
        switch state {
        case .incoming: self = .incoming
        case .dialing: self = .dialing
        case .connected: self = .connected
        case .disconnected: self = .disconnected
        }
    }
}
