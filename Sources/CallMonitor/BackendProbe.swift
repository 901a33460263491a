import DBus

/// What one look at a stack finds: whether it runs, and how many of its modems can carry voice
/// calls. `telwatch doctor` asks this, so the bus names, paths and listings live only in the
/// backends' own code. It blocks (up to `timeout` per call): for one-shot commands, never the daemon.
public enum BackendProbe: Equatable, Sendable {
    /// Nobody owns the stack's name.
    case absent
    case running(owner: String, modems: Int, voiceModems: Int)
    /// The stack's policy refused to list modems to this user (oFono's at_console rule).
    case refused(owner: String, String)
    /// It runs, but listing its modems failed.
    case failed(owner: String, String)

    public static func probe(_ kind: BackendKind, on connection: Connection, timeout: Double = 5) -> BackendProbe {
        let owner: String
        do {
            owner = try connection.callBlocking(destination: BusDaemon.name, path: BusDaemon.path,
                                                interface: BusDaemon.interface, member: "GetNameOwner",
                                                kind.serviceName, timeout: timeout).decode(String.self)
        } catch {
            return .absent
        }
        do {
            switch kind {
            case .modemManager:
                let reply = try connection.callBlocking(
                    destination: kind.serviceName, path: ObjectPath(ModemManagerBus.root),
                    interface: BusDaemon.objectManagerInterface, member: "GetManagedObjects", timeout: timeout)
                let objects = try reply.decode([ObjectPath: [String: PropertyMap]].self)
                let voice = objects.values.filter { $0[ModemManagerBus.voice] != nil }.count
                return .running(owner: owner, modems: objects.count, voiceModems: voice)
            case .ofono:
                let reply = try connection.callBlocking(
                    destination: kind.serviceName, path: "/", interface: OfonoBus.manager, member: "GetModems",
                    timeout: timeout)
                let modems = try reply.decode([PathProperties].self)
                let voice = modems.filter { OfonoBus.hasVoice($0.properties["Interfaces"]) == true }.count
                return .running(owner: owner, modems: modems.count, voiceModems: voice)
            }
        } catch let error as DBusError where error.name == accessDeniedError {
            return .refused(owner: owner, "\(error)")
        } catch {
            return .failed(owner: owner, "\(error)")
        }
    }
}
