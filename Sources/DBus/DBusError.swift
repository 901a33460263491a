import CDBus
import Glibc

/// Every failure the DBus layer reports. Remote errors keep the D-Bus error name and text.
public enum DBusError: Error, Equatable, CustomStringConvertible {
    /// An error reply from the peer (or from libdbus on its behalf), e.g. `org.freedesktop.DBus.Error.ServiceUnknown`.
    case remote(name: String, message: String)
    /// The reply did not arrive within the call's timeout.
    case timedOut(String)
    /// A body did not have the signature the caller expected.
    case signatureMismatch(expected: String, actual: String)
    /// A value inside a body was not what the caller expected (e.g. a variant holding another type).
    case typeMismatch(expected: String, actual: String)
    /// A name, path or member that D-Bus would reject, caught before libdbus sees it (libdbus aborts on them).
    case invalidArgument(String)
    /// Connecting or registering on the bus failed.
    case connectionFailed(String)
    /// The connection is closed or was lost.
    case disconnected

    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    public static let timeoutName = "org.freedesktop.DBus.Error.Timeout"

    /// The D-Bus error name, for errors that have one.
    public var name: String? {
        if case .remote(let name, _) = self { return name }
        return nil
    }

    public var description: String {
        switch self {
        case .remote(let name, let message): return message.isEmpty ? name : "\(name): \(message)"
        case .timedOut(let what): return "timed out: \(what)"
        case .signatureMismatch(let expected, let actual):
            return "unexpected body signature: expected '\(expected)', got '\(actual)'"
        case .typeMismatch(let expected, let actual): return "unexpected type: expected '\(expected)', got '\(actual)'"
        case .invalidArgument(let what): return "invalid argument: \(what)"
        case .connectionFailed(let why): return "cannot connect to the bus: \(why)"
        case .disconnected: return "the bus connection is closed"
        }
    }

    /// Converts a filled-in libdbus error, freeing it.
    static func take(_ error: inout CDBus.DBusError) -> DBusError {
        defer { dbus_error_free(&error) }
        let name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let message = error.message.map { String(cString: $0) } ?? ""
        if name == noReplyName || name == timeoutName { return .timedOut(message) }
        return .remote(name: name, message: message)
    }
}
