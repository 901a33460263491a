import CDBus
import Glibc

/// A variant: a value carrying its own signature.
public struct Variant: DBusType, Equatable, CustomStringConvertible {
    public var value: DBusValue
    public init(_ value: DBusValue) { self.value = value }
    public init<T: DBusType>(_ value: T) { self.value = value.dbusValue }
    public static var dbusSignature: String { "v" }
    public init(from reader: inout MessageReader) throws { value = try reader.readVariant() }
    public init?(dbusValue: DBusValue) {
        if case .variant(let inner) = dbusValue { value = inner } else { value = dbusValue }
    }
    public var dbusValue: DBusValue { .variant(value) }
    public func encode(to writer: inout MessageWriter) throws { try writer.appendVariant(value) }
    public var description: String { value.description }
}
