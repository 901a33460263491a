import CallMonitor
import DBus
import Glibc
import MonitorAPI

extension Doctor {
    /// Who may act on calls through the D-Bus API (docs/dbus-api.md, "Who may act"): polkit's
    /// word on this user for each of telwatch's actions, asked as the service asks it. A user the
    /// package does not grant them to is told so, which is no problem; actions polkit does not
    /// know (the package's policy not installed) are one, as then only root may act.
    mutating func checkActs(_ connection: Connection) {
        guard options.api else { return }
        let bus = options.apiBus ?? options.bus
        guard bus != .session else {
            return note("acts on calls (D-Bus API): on the session bus only this user's programs reach it; polkit is not asked")
        }
        var allowed: [ActAction] = []
        var refused: [ActAction] = []
        for action in ActAction.allCases {
            switch askPolkit(action, on: connection) {
            case .allowed: allowed.append(action)
            case .refused: refused.append(action)
            case .unknownAction(let why):
                return check(false, "acts on calls (D-Bus API): polkit does not know \(action.rawValue) (\(why)): "
                                 + "nobody but root may act", fix: DoctorActs.installFix)
            case .noPolkit:
                let root = getuid() == 0
                return check(root, "acts on calls (D-Bus API): polkit is not on this bus, so only root may act"
                                 + (root ? " (this user is root)" : ""), fix: root ? nil : "start polkit (systemctl start polkit)")
            case .unknown(let why):
                return check(false, "acts on calls (D-Bus API): polkit did not answer: \(why)",
                             fix: "check polkit's logs (journalctl -u polkit) and run doctor again")
            }
        }
        let granted = "the package grants them to root and the user at the active console (\(DoctorActs.policyPath))"
        if refused.isEmpty {
            return check(true, "acts on calls (D-Bus API): polkit allows this user to " + DoctorActs.list(allowed))
        }
        note("acts on calls (D-Bus API): polkit "
             + (allowed.isEmpty ? "" : "allows this user to \(DoctorActs.list(allowed)), but ")
             + "does not allow it to \(DoctorActs.list(refused)); \(granted)")
    }

    private func askPolkit(_ action: ActAction, on connection: Connection) -> DoctorActs.Answer {
        do {
            let reply = try connection.callBlocking(Polkit.checkAuthorization(action.rawValue, subject: connection.uniqueName),
                                                    timeout: 5)
            guard let answer = Polkit.result(of: reply) else { return .unknown("it answered '\(reply.signature)'") }
            return answer.authorized ? .allowed : .refused
        } catch let error as DBusError {
            switch error.name {
            case "org.freedesktop.DBus.Error.ServiceUnknown"?, "org.freedesktop.DBus.Error.NameHasNoOwner"?: return .noPolkit
            // polkitd's words for an action no installed policy declares.
            case let name? where name.hasPrefix("org.freedesktop.PolicyKit1.Error."): return .unknownAction("\(error)")
            default: return .unknown("\(error)")
            }
        } catch {
            return .unknown("\(error)")
        }
    }
}

/// Doctor's words on telwatch's polkit actions.
enum DoctorActs {
    enum Answer {
        case allowed, refused, noPolkit
        case unknownAction(String)
        case unknown(String)
    }

    static let policyPath = "/usr/share/polkit-1/actions/io.telwatch.policy"
    static let installFix = "install the package's polkit policy (dist/polkit-1/io.telwatch.policy) as \(policyPath)"

    static func list(_ actions: [ActAction]) -> String {
        actions.map { "\($0.acts) (\($0.rawValue))" }.joined(separator: " and to ")
    }
}
