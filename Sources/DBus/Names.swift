import CDBus
import Glibc

/// A D-Bus object path, validated on creation.
public struct ObjectPath: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(_ rawValue: String) throws {
        guard DBusName.isValidPath(rawValue) else { throw DBusError.invalidArgument("object path '\(rawValue)'") }
        self.rawValue = rawValue
    }

    /// For paths that are known good at compile time; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        precondition(DBusName.isValidPath(value), "invalid object path literal '\(value)'")
        rawValue = value
    }

    /// Already validated by libdbus (read from a received message).
    init(trusted rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}

/// A D-Bus type signature, validated on creation.
public struct Signature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(_ rawValue: String) throws {
        guard dbus_signature_validate(rawValue, nil) != 0 else {
            throw DBusError.invalidArgument("signature '\(rawValue)'")
        }
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        precondition(dbus_signature_validate(value, nil) != 0, "invalid signature literal '\(value)'")
        rawValue = value
    }

    init(trusted rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }
}

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

/// Well-known names of the bus itself.
public enum BusDaemon {
    public static let name = "org.freedesktop.DBus"
    public static let path: ObjectPath = "/org/freedesktop/DBus"
    public static let interface = "org.freedesktop.DBus"
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    public static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    public static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
}
