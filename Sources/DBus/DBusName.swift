import CDBus
import Glibc

/// Validation of names before they reach libdbus, which aborts the process on an invalid one.
public enum DBusName {
    public static func isValidPath(_ s: String) -> Bool { dbus_validate_path(s, nil) != 0 }
    public static func isValidInterface(_ s: String) -> Bool { dbus_validate_interface(s, nil) != 0 }
    public static func isValidMember(_ s: String) -> Bool { dbus_validate_member(s, nil) != 0 }
    public static func isValidBusName(_ s: String) -> Bool { dbus_validate_bus_name(s, nil) != 0 }
    public static func isValidErrorName(_ s: String) -> Bool { dbus_validate_error_name(s, nil) != 0 }

    static func check(path: String) throws {
        guard isValidPath(path) else { throw DBusError.invalidArgument("object path '\(path)'") }
    }
    static func check(interface: String) throws {
        guard isValidInterface(interface) else { throw DBusError.invalidArgument("interface '\(interface)'") }
    }
    static func check(member: String) throws {
        guard isValidMember(member) else { throw DBusError.invalidArgument("member '\(member)'") }
    }
    static func check(busName: String) throws {
        guard isValidBusName(busName) else { throw DBusError.invalidArgument("bus name '\(busName)'") }
    }
}

