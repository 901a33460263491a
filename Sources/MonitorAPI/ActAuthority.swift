import CallMonitor
import DBus

/// Who may act on calls through the API (docs/dbus-api.md, "Who may act"): the caller's uid, as
/// the bus tells it, and polkit's word on the caller for the act's action, both asked without
/// blocking. On the session bus (the user unit) only that user's programs reach the API, and
/// polkit is not asked. With no polkit on the bus only root may act, as polkit itself would allow.
final class ActAuthority {
    enum Verdict: Equatable {
        case allowed(uid: UInt32)
        /// In words, for the `NotPermitted` error.
        case refused(String)
    }

    /// How long polkit and the bus may take to answer (polkit answers at once without an agent).
    static let timeout = 10.0

    private unowned let connection: Connection

    init(connection: Connection) {
        self.connection = connection
    }

    /// `done` runs once, on the loop's thread.
    func check(_ action: ActAction, sender: String?, done: @escaping (Verdict) -> Void) {
        guard let sender else { return done(.refused("the bus did not say who asks")) }
        let uidCall: Message
        do {
            uidCall = try Message.methodCall(destination: BusDaemon.name, path: BusDaemon.path,
                                             interface: BusDaemon.interface, member: "GetConnectionUnixUser")
            try uidCall.append(sender)
        } catch {
            return done(.refused("the caller's uid could not be asked: \(error)"))
        }
        connection.call(uidCall, timeout: ActAuthority.timeout) { [weak self] result in
            guard case .success(let reply) = result, let uid = try? reply.decode(UInt32.self) else {
                return done(.refused("the bus did not tell the caller's uid"))
            }
            guard let self, self.connection.bus != .session else { return done(.allowed(uid: uid)) }
            self.askPolkit(action, sender: sender, uid: uid, done: done)
        }
    }

    private func askPolkit(_ action: ActAction, sender: String, uid: UInt32, done: @escaping (Verdict) -> Void) {
        let message: Message
        do { message = try Polkit.checkAuthorization(action.rawValue, subject: sender) } catch {
            return done(.refused("polkit could not be asked: \(error)"))
        }
        connection.call(message, timeout: ActAuthority.timeout) { result in
            switch result {
            case .success(let reply):
                guard let answer = Polkit.result(of: reply) else {
                    return done(.refused("polkit answered '\(reply.signature)', not (bba{ss})"))
                }
                done(answer.authorized ? .allowed(uid: uid)
                     : .refused("polkit does not allow \(action.rawValue) for uid \(uid)"
                                + (answer.challenge ? " without a password, which nobody can type here" : "")))
            case .failure(let error) where ActAuthority.noOwner.contains(error.name ?? ""):
                done(uid == 0 ? .allowed(uid: uid) : .refused("polkit is not running on this bus: only root may act"))
            case .failure(let error):
                done(.refused("polkit did not answer: \(error)"))
            }
        }
    }

    private static let noOwner: Set<String> = ["org.freedesktop.DBus.Error.ServiceUnknown",
                                               "org.freedesktop.DBus.Error.NameHasNoOwner"]
}
