import DBus
import Glibc
import Loop

/// A loop and a connection to the chosen bus: what every command that talks to a bus starts with.
struct BusSession {
    let loop: EventLoop
    let connection: Connection

    init(_ bus: BusAddress) throws {
        loop = try EventLoop()
        connection = try Connection(bus, loop: loop)
        connection.onWarning = { warn("dbus: " + $0) }
    }

    /// The session, or nil after saying on stderr why the bus cannot be had (exit status 3).
    static func open(_ bus: BusAddress) -> BusSession? {
        do { return try BusSession(bus) } catch {
            warn("\(error)")
            return nil
        }
    }
}
