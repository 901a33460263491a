import CDBus
import Glibc

/// A Swift type with a fixed D-Bus signature that can be read from and written to message bodies.
/// Conform your own structs with `reader.readStruct` / `writer.appendStruct`.
public protocol DBusType {
    static var dbusSignature: String { get }
    init(from reader: inout MessageReader) throws
    func encode(to writer: inout MessageWriter) throws
    /// Converts from a dynamically typed value (a variant's content); nil if it holds another type.
    init?(dbusValue: DBusValue)
    var dbusValue: DBusValue { get }
}

extension DBusType {
    public func encode(to writer: inout MessageWriter) throws { try writer.append(dbusValue) }
}

extension UInt8: DBusType {
    public static var dbusSignature: String { "y" }
    public init(from reader: inout MessageReader) throws { self = try reader.readBasic(CDBUS_TYPE_BYTE, "y").byt }
    public init?(dbusValue: DBusValue) { guard case .byte(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .byte(self) }
}

extension Bool: DBusType {
    public static var dbusSignature: String { "b" }
    public init(from reader: inout MessageReader) throws {
        self = try reader.readBasic(CDBUS_TYPE_BOOLEAN, "b").bool_val != 0
    }
    public init?(dbusValue: DBusValue) { guard case .bool(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .bool(self) }
}

extension Int16: DBusType {
    public static var dbusSignature: String { "n" }
    public init(from reader: inout MessageReader) throws { self = try reader.readBasic(CDBUS_TYPE_INT16, "n").i16 }
    public init?(dbusValue: DBusValue) { guard case .int16(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .int16(self) }
}

extension UInt16: DBusType {
    public static var dbusSignature: String { "q" }
    public init(from reader: inout MessageReader) throws { self = try reader.readBasic(CDBUS_TYPE_UINT16, "q").u16 }
    public init?(dbusValue: DBusValue) { guard case .uint16(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .uint16(self) }
}

extension Int32: DBusType {
    public static var dbusSignature: String { "i" }
    public init(from reader: inout MessageReader) throws { self = try reader.readBasic(CDBUS_TYPE_INT32, "i").i32 }
    public init?(dbusValue: DBusValue) { guard case .int32(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .int32(self) }
}

extension UInt32: DBusType {
    public static var dbusSignature: String { "u" }
    public init(from reader: inout MessageReader) throws { self = try reader.readBasic(CDBUS_TYPE_UINT32, "u").u32 }
    public init?(dbusValue: DBusValue) { guard case .uint32(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .uint32(self) }
}

extension Int64: DBusType {
    public static var dbusSignature: String { "x" }
    public init(from reader: inout MessageReader) throws { self = Int64(try reader.readBasic(CDBUS_TYPE_INT64, "x").i64) }
    public init?(dbusValue: DBusValue) { guard case .int64(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .int64(self) }
}

extension UInt64: DBusType {
    public static var dbusSignature: String { "t" }
    public init(from reader: inout MessageReader) throws { self = UInt64(try reader.readBasic(CDBUS_TYPE_UINT64, "t").u64) }
    public init?(dbusValue: DBusValue) { guard case .uint64(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .uint64(self) }
}

extension Double: DBusType {
    public static var dbusSignature: String { "d" }
    public init(from reader: inout MessageReader) throws { self = try reader.readBasic(CDBUS_TYPE_DOUBLE, "d").dbl }
    public init?(dbusValue: DBusValue) { guard case .double(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .double(self) }
}

extension String: DBusType {
    public static var dbusSignature: String { "s" }
    public init(from reader: inout MessageReader) throws { self = try reader.readString(CDBUS_TYPE_STRING, "s") }
    public init?(dbusValue: DBusValue) { guard case .string(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .string(self) }
    public func encode(to writer: inout MessageWriter) throws { writer.appendString(CDBUS_TYPE_STRING, self) }
}

extension ObjectPath: DBusType {
    public static var dbusSignature: String { "o" }
    public init(from reader: inout MessageReader) throws {
        self.init(trusted: try reader.readString(CDBUS_TYPE_OBJECT_PATH, "o"))
    }
    public init?(dbusValue: DBusValue) { guard case .objectPath(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .objectPath(self) }
}

extension Signature: DBusType {
    public static var dbusSignature: String { "g" }
    public init(from reader: inout MessageReader) throws {
        self.init(trusted: try reader.readString(CDBUS_TYPE_SIGNATURE, "g"))
    }
    public init?(dbusValue: DBusValue) { guard case .signature(let v) = dbusValue else { return nil }; self = v }
    public var dbusValue: DBusValue { .signature(self) }
}

/// Decoding a unix fd yields a new descriptor owned by the reader (libdbus duplicates it).
extension UnixFD: DBusType {
    public static var dbusSignature: String { "h" }
    public convenience init(from reader: inout MessageReader) throws {
        self.init(taking: try reader.readBasic(CDBUS_TYPE_UNIX_FD, "h").fd)
    }
    public convenience init?(dbusValue: DBusValue) {
        guard case .unixFD(let other) = dbusValue else { return nil }
        let copy = fcntl(other.rawValue, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        self.init(taking: copy)
    }
    public var dbusValue: DBusValue { .unixFD(self) }
}

extension DBusValue {
    /// Wraps a typed value in a variant, the shape of every `a{sv}` value.
    public static func variant<T: DBusType>(of value: T) -> DBusValue { .variant(value.dbusValue) }
}

extension Array: DBusType where Element: DBusType {
    public static var dbusSignature: String { "a" + Element.dbusSignature }
    public init(from reader: inout MessageReader) throws {
        self = try reader.readArray(elementSignature: Element.dbusSignature) { inner in try Element(from: &inner) }
    }
    public func encode(to writer: inout MessageWriter) throws {
        try writer.appendArray(elementSignature: Element.dbusSignature, self) { inner, item in
            try item.encode(to: &inner)
        }
    }
    public init?(dbusValue: DBusValue) {
        guard case .array(let signature, let items) = dbusValue, signature.rawValue == Element.dbusSignature
        else { return nil }
        var out: [Element] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let element = Element(dbusValue: item) else { return nil }
            out.append(element)
        }
        self = out
    }
    public var dbusValue: DBusValue {
        .array(elementSignature: Signature(trusted: Element.dbusSignature), map(\.dbusValue))
    }
}

extension Dictionary: DBusType where Key: DBusType, Value: DBusType {
    public static var dbusSignature: String { "a{" + Key.dbusSignature + Value.dbusSignature + "}" }
    public init(from reader: inout MessageReader) throws {
        let entry = "{" + Key.dbusSignature + Value.dbusSignature + "}"
        var out: [Key: Value] = [:]
        _ = try reader.readArray(elementSignature: entry) { inner in
            try inner.readDictEntry(signature: entry) { pair in
                let key = try Key(from: &pair)
                out[key] = try Value(from: &pair)
            }
        }
        self = out
    }
    public func encode(to writer: inout MessageWriter) throws {
        try writer.appendArray(elementSignature: "{" + Key.dbusSignature + Value.dbusSignature + "}", self) {
            inner, pair in
            try inner.appendDictEntry { entry in
                try pair.key.encode(to: &entry)
                try pair.value.encode(to: &entry)
            }
        }
    }
    public init?(dbusValue: DBusValue) {
        guard case .dictionary(let keySignature, let valueSignature, let entries) = dbusValue,
              keySignature.rawValue == Key.dbusSignature, valueSignature.rawValue == Value.dbusSignature
        else { return nil }
        var out: [Key: Value] = [:]
        for entry in entries {
            guard let key = Key(dbusValue: entry.key), let value = Value(dbusValue: entry.value) else { return nil }
            out[key] = value
        }
        self = out
    }
    public var dbusValue: DBusValue {
        .dictionary(
            keySignature: Signature(trusted: Key.dbusSignature),
            valueSignature: Signature(trusted: Value.dbusSignature),
            map { DBusValue.DictEntry($0.key.dbusValue, $0.value.dbusValue) })
    }
}

/// The shape of every property map: `a{sv}`.
public typealias PropertyMap = [String: Variant]
