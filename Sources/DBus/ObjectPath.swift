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
