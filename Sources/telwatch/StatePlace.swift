import BGRunManager
import DBus
import Glibc
import MonitorAPI

/// Which state directory `status`, `log` and `doctor` read, by one rule (docs/reference.md, "Which
/// state directory"): the one asked for (`--state-dir`, or `state-dir` in the config file); else
/// the running service's, which its API tells (`StateDirectory`); else the system service's,
/// /var/lib/telwatch, when this user may read it; else this user's own. Each command says which.
struct StatePlace: Equatable {
    enum Origin: Equatable {
        case asked
        case service(pid: UInt32?)
        case system
        case user
    }

    let directory: String
    let origin: Origin

    /// Where the packaged system unit keeps its state (`StateDirectory=telwatch`).
    static let systemDirectory = "/var/lib/telwatch"

    /// nil only when nothing is asked for, no service tells, the system directory may not be
    /// read and no user directory can be named (no `$HOME`).
    static func find(_ options: WatchOptions, bus: Connection?) -> StatePlace? {
        if let asked = options.stateDirectory { return StatePlace(directory: asked, origin: .asked) }
        if let bus, let service = serviceDirectory(on: bus) { return service }
        if access(systemDirectory, R_OK | X_OK) == 0 { return StatePlace(directory: systemDirectory, origin: .system) }
        return RunStateStore.defaultDirectory().map { StatePlace(directory: $0, origin: .user) }
    }

    /// The running service's directory, as its API tells it; nil when none runs, it keeps none,
    /// or this user may not ask it.
    static func serviceDirectory(on bus: Connection) -> StatePlace? {
        guard let owner = try? bus.callBlocking(
            destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface, member: "GetNameOwner",
            MonitorNames.busName, timeout: 2).decode(String.self),
              let reply = try? bus.callBlocking(
                destination: owner, path: MonitorNames.path, interface: BusDaemon.propertiesInterface, member: "Get",
                MonitorNames.interface, "StateDirectory", timeout: 2).decode(Variant.self),
              let directory = reply.value.string, directory.hasPrefix("/") else { return nil }
        let pid = try? bus.callBlocking(
            destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
            member: "GetConnectionUnixProcessID", owner, timeout: 2).decode(UInt32.self)
        return StatePlace(directory: directory, origin: .service(pid: pid))
    }

    /// Where it came from, in words: "the running service's (pid 812)".
    var why: String {
        switch origin {
        case .asked: return "as asked"
        case .service(let pid): return "the running service's" + (pid.map { " (pid \($0))" } ?? "")
        case .system: return "the system service's"
        case .user:
            // The system service's may hold the calls this user is looking for.
            var info = stat()
            guard stat(StatePlace.systemDirectory, &info) == 0 else { return "this user's" }
            return "this user's; \(StatePlace.systemDirectory) is the system service's: "
                + Access.joinHint(group: Access.group(of: StatePlace.systemDirectory))
        }
    }

    /// Why `directory` cannot be a state directory, as the end of a sentence that starts with
    /// it ("is a regular file, not a directory"); nil when it is a directory or is not there yet.
    static func notADirectory(_ directory: String) -> String? {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            return errno == ENOTDIR ? "cannot be one: a part of its path is not a directory" : nil
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return nil
        case S_IFREG: return "is a regular file, not a directory"
        default: return "is not a directory"
        }
    }

    /// The one line on stderr that says which directory was used, unless it was asked for.
    func say(_ command: String) {
        guard origin != .asked else { return }
        warn("\(command): state directory \(TerminalText.field(directory)) (\(why))", priority: .info)
    }
}
