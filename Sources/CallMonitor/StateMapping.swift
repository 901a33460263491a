// Pure mapping from the backends' raw values to the neutral model (docs/modem-stacks.md §1).
// Unknown raw values are kept verbatim (as `.unknown(raw)` or as the reason string), never a trap.

/// ModemManager `org.freedesktop.ModemManager1.Call`: `State i`, `Direction i`, `StateReason i`
/// (and the `u` reason of `StateChanged(i, i, u)`).
public enum ModemManagerMapping {
    /// `MMCallState` (+ `MMCallDirection`, which decides WAITING and UNKNOWN) → phase.
    ///
    /// 3 RINGING_IN → incoming/ringing; 6 WAITING → incoming/waiting, or dialing/alerting when the
    /// direction is outgoing; 0 UNKNOWN → dialing/dialing when outgoing, else unknown("0");
    /// 1 DIALING → dialing/dialing; 2 RINGING_OUT → dialing/alerting; 4 ACTIVE → connected/active;
    /// 5 HELD → connected/held; 7 TERMINATED → ended; anything else → unknown("<n>").
    public static func phase(state: Int32, direction: Int32) -> CallPhase {
        switch state {
        case 0:
            return self.direction(direction) == .outgoing ? .live(.dialing, .dialing) : .unknown("0")
        case 1: return .live(.dialing, .dialing)
        case 2: return .live(.dialing, .alerting)
        case 3: return .live(.incoming, .ringing)
        case 4: return .live(.connected, .active)
        case 5: return .live(.connected, .held)
        case 6:
            return self.direction(direction) == .outgoing ? .live(.dialing, .alerting) : .live(.incoming, .waiting)
        case 7: return .ended
        default: return .unknown(String(state))
        }
    }

    /// `MMCallDirection`: 0 unknown, 1 incoming, 2 outgoing, anything else unknown.
    public static func direction(_ raw: Int32) -> CallDirection {
        switch raw {
        case 1: return .incoming
        case 2: return .outgoing
        default: return .unknown
        }
    }

    /// `MMCallStateReason` (the `StateReason` property, an `i`) → reason string; an unknown
    /// value becomes its decimal form.
    public static func reason(_ raw: Int32) -> String {
        switch raw {
        case 0: return "unknown"
        case 1: return "outgoing-started"
        case 2: return "incoming-new"
        case 3: return "accepted"
        case 4: return "terminated"
        case 5: return "refused-or-busy"
        case 6: return "error"
        case 7: return "audio-setup-failed"
        case 8: return "transferred"
        case 9: return "deflected"
        default: return String(raw)
        }
    }

    /// Whether a `StateReason` says the call was connected at some point: 3 accepted, 8 transferred
    /// (only a connected call can be transferred). ModemManager keeps no other record of it, so a
    /// call found already TERMINATED with any other reason may or may not have been answered.
    public static func impliesConnected(_ raw: Int32) -> Bool {
        raw == 3 || raw == 8
    }

    /// The `u` reason of `StateChanged(i old, i new, u reason)`. Values above `Int32.max` are
    /// unknown and kept as their unsigned decimal form.
    public static func reason(_ raw: UInt32) -> String {
        guard let signed = Int32(exactly: raw) else { return String(raw) }
        return reason(signed)
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
