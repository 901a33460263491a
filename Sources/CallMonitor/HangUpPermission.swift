import DBus

/// Whether this connection's user may hang a call up at a stack, as call screening's `reject`
/// does (docs/screening.md, "Permissions"). `telwatch doctor` asks this; it blocks (up to
/// `timeout`): for one-shot commands, never the daemon. It never ends a call.
public enum HangUpPermission: Equatable, Sendable {
    /// ModemManager: polkit says yes to the action; oFono: the bus's policy lets the call through.
    case allowed
    /// ModemManager: polkit says no; oFono: the bus's policy refuses the call (its words).
    case refused(String)
    /// polkit would ask for a password: a service has nobody to type it, so ModemManager refuses.
    case needsAuthentication
    /// Nobody answers for polkit on this bus: ModemManager cannot be authorized.
    case noPolkit(String)
    /// The question got no usable answer (a timeout, the stack left, an odd reply).
    case unknown(String)

    /// The polkit action ModemManager checks before `Call.Hangup` (and the other voice methods).
    public static let modemManagerAction = "org.freedesktop.ModemManager1.Voice"

    /// The bus's answers when nobody owns the name asked, nor can be started for it.
    private static let noOwner: Set<String> = ["org.freedesktop.DBus.Error.ServiceUnknown",
                                               "org.freedesktop.DBus.Error.NameHasNoOwner"]

    public static func probe(_ kind: BackendKind, on connection: Connection, timeout: Double = 5) -> HangUpPermission {
        switch kind {
        case .modemManager: return askPolkit(modemManagerAction, on: connection, timeout: timeout)
        case .ofono: return probeOfonoPolicy(on: connection, timeout: timeout)
        }
    }

    /// polkit's `CheckAuthorization` with this connection as the subject (the bus name, as
    /// ModemManager names its caller) and no user interaction: what ModemManager would hear.
    static func askPolkit(_ action: String, on connection: Connection, timeout: Double) -> HangUpPermission {
        do {
            let reply = try connection.callBlocking(Polkit.checkAuthorization(action, subject: connection.uniqueName),
                                                    timeout: timeout)
            guard let answer = Polkit.result(of: reply) else {
                return .unknown("polkit answered '\(reply.signature)', not (bba{ss})")
            }
            if answer.authorized { return .allowed }
            return answer.challenge ? .needsAuthentication : .refused("polkit does not allow \(action) for this user")
        } catch let error as DBusError where error.name.map(noOwner.contains) == true {
            return .noPolkit("\(error)")
        } catch {
            return .unknown("\(error)")
        }
    }

    /// oFono has no polkit: the system bus's policy for `org.ofono` decides who may call it. The
    /// probe is a `VoiceCall.Hangup` sent to `/`, oFono's manager object, which is never a call:
    /// a bus that refuses it answers AccessDenied itself; one that lets it through delivers it,
    /// and oFono answers that `/` has no such method (UnknownMethod). No call is touched either way.
    static func probeOfonoPolicy(on connection: Connection, timeout: Double) -> HangUpPermission {
        do {
            _ = try connection.callBlocking(destination: OfonoBus.service, path: "/", interface: OfonoBus.voiceCall,
                                            member: "Hangup", timeout: timeout)
            return .allowed
        } catch let error as DBusError {
            switch error.name {
            case accessDeniedError?: return .refused("\(error)")
            case nil, DBusError.noReplyName?, DBusError.timeoutName?: return .unknown("\(error)")
            case let name? where noOwner.contains(name): return .unknown("\(error)")
            default: return .allowed  // oFono's own answer: the bus delivered the call
            }
        } catch {
            return .unknown("\(error)")
        }
    }
}
