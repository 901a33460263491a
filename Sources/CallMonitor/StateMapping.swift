// Pure mapping from the backends' raw values to the neutral model (docs/modem-stacks.md §1).
// Unknown raw values are kept verbatim (as `.unknown(raw)` or as the reason string), never a trap.

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

/// `MMCallDirection`: 0 unknown, 1 incoming, 2 outgoing (docs/modem-stacks.md §1.2).
public enum ModemManagerCallDirection: Int32, Sendable, CaseIterable {
    case unknown = 0, incoming, outgoing

    /// As the bus carries it: a value the daemon does not define says no more than `unknown`.
    public init(bus raw: Int32) {
        self = ModemManagerCallDirection(rawValue: raw) ?? .unknown
    }
}

/// A ModemManager state or reason as it came off the bus. A number the daemon does not define
/// stays that number, to be reported as it is rather than trapped on or guessed at.
public struct ModemManagerValue<Known: RawRepresentable>: Hashable, Sendable where Known.RawValue == Int32 {
    public let raw: Int32

    public init(raw: Int32) {
        self.raw = raw
    }

    public init(_ known: Known) {
        raw = known.rawValue
    }

    /// nil for a number the daemon does not define.
    public var known: Known? { Known(rawValue: raw) }
}

/// ModemManager `org.freedesktop.ModemManager1.Call`: `State i`, `Direction i`, `StateReason i`
/// (and the `u` reason of `StateChanged(i, i, u)`).
public enum ModemManagerMapping {
    /// The state (with the direction, which decides what WAITING and UNKNOWN mean) → phase.
    public static func phase(state: ModemManagerCallState, direction: ModemManagerCallDirection) -> CallPhase {
        switch state {
        case .unknown:
            // An outgoing call waits in UNKNOWN between CreateCall and Start (docs/modem-stacks.md §2.3);
            // any other call in it tells nothing.
            return direction == .outgoing ? .live(.dialing, .dialing) : .unknown(String(state.rawValue))
        case .dialing: return .live(.dialing, .dialing)
        case .ringingOut: return .live(.dialing, .alerting)
        case .ringingIn: return .live(.incoming, .ringing)
        case .active: return .live(.connected, .active)
        case .held: return .live(.connected, .held)
        case .waiting: return direction == .outgoing ? .live(.dialing, .alerting) : .live(.incoming, .waiting)
        case .terminated: return .ended
        }
    }

    /// A state the daemon does not define is `unknown("<n>")`: no transition.
    public static func phase(state: ModemManagerValue<ModemManagerCallState>,
                             direction: ModemManagerCallDirection) -> CallPhase {
        guard let known = state.known else { return .unknown(String(state.raw)) }
        return phase(state: known, direction: direction)
    }

    public static func direction(_ direction: ModemManagerCallDirection) -> CallDirection {
        switch direction {
        case .unknown: return .unknown
        case .incoming: return .incoming
        case .outgoing: return .outgoing
        }
    }

    /// The `StateReason` property (an `i`); a reason the daemon does not define is its decimal form.
    public static func reason(_ reason: ModemManagerValue<ModemManagerCallStateReason>) -> String {
        reason.known?.word ?? String(reason.raw)
    }

    /// The `u` reason of `StateChanged(i old, i new, u reason)`. Values above `Int32.max` are
    /// unknown and kept as their unsigned decimal form.
    public static func reason(_ raw: UInt32) -> String {
        guard let signed = Int32(exactly: raw) else { return String(raw) }
        return reason(ModemManagerValue(raw: signed))
    }
}

/// oFono `org.ofono.VoiceCall`: the `State` string and the `DisconnectReason(s)` signal.
public enum OfonoMapping {
    /// incoming → incoming/ringing, waiting → incoming/waiting, dialing → dialing/dialing,
    /// alerting → dialing/alerting, active → connected/active, held → connected/held,
    /// disconnected → ended, anything else → unknown(raw verbatim). Case-sensitive, as oFono sends.
    public static func phase(_ state: String) -> CallPhase {
        switch state {
        case "incoming": return .live(.incoming, .ringing)
        case "waiting": return .live(.incoming, .waiting)
        case "dialing": return .live(.dialing, .dialing)
        case "alerting": return .live(.dialing, .alerting)
        case "active": return .live(.connected, .active)
        case "held": return .live(.connected, .held)
        case "disconnected": return .ended
        default: return .unknown(state)
        }
    }

    /// "local" / "remote" / "network" as they are; anything else verbatim (also "").
    public static func disconnectReason(_ reason: String) -> String {
        reason
    }
}
