/// `MMCallState`, the `State` of a ModemManager call: 0 UNKNOWN … 7 TERMINATED in the daemon's
/// order (docs/modem-stacks.md §1.1).
public enum ModemManagerCallState: Int32, Sendable, CaseIterable {
    case unknown = 0, dialing, ringingOut, ringingIn, active, held, waiting, terminated
}

/// `MMCallStateReason`, why a ModemManager call is in its state: 0 unknown … 9 deflected in the
/// daemon's order (docs/modem-stacks.md §1.3).
public enum ModemManagerCallStateReason: Int32, Sendable, CaseIterable {
    case unknown = 0, outgoingStarted, incomingNew, accepted, terminated, refusedOrBusy, error, audioSetupFailed,
         transferred, deflected

    /// The reason as the event stream and hooks carry it.
    public var word: String {
        switch self {
        case .unknown: return "unknown"
        case .outgoingStarted: return "outgoing-started"
        case .incomingNew: return "incoming-new"
        case .accepted: return "accepted"
        case .terminated: return "terminated"
        case .refusedOrBusy: return "refused-or-busy"
        case .error: return "error"
        case .audioSetupFailed: return "audio-setup-failed"
        case .transferred: return "transferred"
        case .deflected: return "deflected"
        }
    }

    /// Whether the call was connected at some point: only a connected call can have been
    /// accepted or transferred. ModemManager keeps no other record of it, so a call found already
    /// TERMINATED with any other reason may or may not have been answered.
    public var impliesConnected: Bool {
        self == .accepted || self == .transferred
    }
}
