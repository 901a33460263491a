// Pure mapping from the backends' raw values to the neutral model (docs/modem-stacks.md §1).
// Unknown raw values are kept verbatim (as `.unknown(raw)` or as the reason string), never a trap.

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
