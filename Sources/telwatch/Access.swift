import DBus
import Glibc

/// What to tell a user who may not read telwatch's state or ask its service.
enum Access {
    /// The group that owns `path` (`telwatch` as packaged).
    static func group(of path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0, let entry = getgrgid(info.st_gid), let name = entry.pointee.gr_name else {
            return "telwatch"
        }
        return String(cString: name)
    }

    /// This user's login name, for the command that adds it to a group.
    static var userName: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "USER" }
        return String(cString: name)
    }

    /// "run as root or join the telwatch group: sudo adduser ann telwatch, then log in again".
    static func joinHint(group: String) -> String {
        "run as root, or join the \(group) group: sudo adduser \(userName) \(group), then log in again"
    }

    /// The bus policy (dist/dbus-1/io.telwatch.Monitor1.conf) refused this user.
    static func isRefusal(_ error: Error) -> Bool {
        if case DBusError.remote(name: "org.freedesktop.DBus.Error.AccessDenied", _) = error { return true }
        return false
    }

    /// One line for a refusal by the service's bus policy: who may ask, and how to become one.
    static func refusal(_ command: String, bus: BusAddress) -> String {
        "\(command): the telwatch service on the \(bus) bus does not answer this user: only root, members of the "
            + "telwatch group and the user at the console may ask it; to join the group: sudo adduser \(userName) "
            + "telwatch, then log in again"
    }
}
