import DBus
import Loop
import MonitorAPI
import Pipeline

/// The D-Bus API as `watch` runs it: on the watched bus's connection, or on a connection of its
/// own to `--api-bus`; its name claimed before anything else starts, so that a second telwatch
/// stops before it touches the run, the lock or the history of the first.
struct APIService {
    /// The connection that owns the name: the API (a sink, `MonitorAPI`) is made on it with the others.
    let connection: Connection
    /// Its own connection when `--api-bus` is another bus than the one watched.
    let ownConnection: Connection?

    /// Another telwatch has the name: said on stderr, exit status 5.
    struct NameTaken: Error, CustomStringConvertible {
        let bus: BusAddress
        let owner: String
        let pid: UInt32?
        var description: String {
            "another telwatch" + (pid.map { " (pid \($0))" } ?? "") + " owns \(MonitorNames.busName) on the \(bus) bus "
                + "as \(owner); stop it, or start this one with --no-api"
        }
    }

    /// The name claimed, or nil with `--no-api`.
    static func claim(_ options: WatchOptions, watched connection: Connection, loop: EventLoop) throws -> APIService? {
        guard options.api else { return nil }
        var ownConnection: Connection?
        if let bus = options.apiBus, bus != options.bus {
            ownConnection = try Connection(bus, loop: loop)
            ownConnection?.onWarning = connection.onWarning
        }
        let bus = ownConnection ?? connection
        let claim: MonitorAPI.Claim
        do { claim = try MonitorAPI.claimName(on: bus) } catch DBusError.remote(name: "org.freedesktop.DBus.Error.AccessDenied", _) {
            // The calls matter more than the API: without the policy file telwatch still watches.
            warn("api: off: the \(bus.bus) bus does not let this user own \(MonitorNames.busName); install "
                 + "dist/dbus-1/io.telwatch.Monitor1.conf in /etc/dbus-1/system.d/ (docs/dbus-api.md), or give --no-api")
            ownConnection?.close()
            return nil
        }
        switch claim {
        case .owned: return APIService(connection: bus, ownConnection: ownConnection)
        case .taken(let owner, let pid):
            ownConnection?.close()
            throw NameTaken(bus: bus.bus, owner: owner, pid: pid)
        }
    }
}
