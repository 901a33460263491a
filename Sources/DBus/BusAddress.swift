import CDBus
import Glibc
import Loop

/// Which bus to connect to.
public enum BusAddress: Equatable, Sendable, CustomStringConvertible {
    /// `DBUS_SYSTEM_BUS_ADDRESS`, else the standard system socket.
    case system
    /// `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit address such as `unix:path=/run/x/bus`.
    case address(String)

    /// Parses `system`, `session`, or an address (`transport:key=value…`, such as
    /// `unix:path=/run/bus`); nil for anything else.
    public init?(_ text: String) {
        switch text {
        case "system": self = .system
        case "session": self = .session
        case _ where text.contains(":") && text.contains("="): self = .address(text)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .system: return "system"
        case .session: return "session"
        case .address(let address): return address
        }
    }
}
