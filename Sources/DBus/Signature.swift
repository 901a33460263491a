import CDBus
import Glibc

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
