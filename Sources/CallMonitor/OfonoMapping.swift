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
