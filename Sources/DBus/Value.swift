/// Any D-Bus value, for bodies whose shape is only known at run time (variants above all).
public indirect enum DBusValue: CustomStringConvertible {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    case unixFD(UnixFD)
    case array(elementSignature: Signature, [DBusValue])
    case dictionary(keySignature: Signature, valueSignature: Signature, [DictEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    public struct DictEntry {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) { self.key = key; self.value = value }
    }

    public var signature: Signature { Signature(trusted: signatureString) }

    var signatureString: String {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return "h"
        case .array(let element, _): return "a" + element.rawValue
        case .dictionary(let key, let value, _): return "a{" + key.rawValue + value.rawValue + "}"
        case .structure(let fields): return "(" + fields.map(\.signatureString).joined() + ")"
        case .variant: return "v"
        }
    }

    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var bool: Bool? { if case .bool(let v) = unwrapped { return v }; return nil }
    public var byte: UInt8? { if case .byte(let v) = unwrapped { return v }; return nil }
    public var int32: Int32? { if case .int32(let v) = unwrapped { return v }; return nil }
    public var uint32: UInt32? { if case .uint32(let v) = unwrapped { return v }; return nil }
    public var int64: Int64? { if case .int64(let v) = unwrapped { return v }; return nil }
    public var uint64: UInt64? { if case .uint64(let v) = unwrapped { return v }; return nil }
    public var double: Double? { if case .double(let v) = unwrapped { return v }; return nil }
    public var string: String? { if case .string(let v) = unwrapped { return v }; return nil }
    public var objectPath: ObjectPath? { if case .objectPath(let v) = unwrapped { return v }; return nil }

    /// Elements of an array (of any element type).
    public var array: [DBusValue]? { if case .array(_, let v) = unwrapped { return v }; return nil }

    /// An `a{s…}` dictionary as a Swift dictionary; later duplicates win.
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
        var out: [String: DBusValue] = [:]
        for entry in entries { if let key = entry.key.string { out[key] = entry.value } }
        return out
    }

    /// Converts to a statically typed value, or nil when the value holds another type.
    public func `as`<T: DBusType>(_ type: T.Type) -> T? { T(dbusValue: unwrapped) }

    public var description: String {
        switch self {
        case .byte(let v): return "byte \(v)"
        case .bool(let v): return v ? "true" : "false"
        case .int16(let v): return "int16 \(v)"
        case .uint16(let v): return "uint16 \(v)"
        case .int32(let v): return "int32 \(v)"
        case .uint32(let v): return "uint32 \(v)"
        case .int64(let v): return "int64 \(v)"
        case .uint64(let v): return "uint64 \(v)"
        case .double(let v): return "double \(v)"
        case .string(let v): return String(reflecting: v)
        case .objectPath(let v): return "objpath '\(v.rawValue)'"
        case .signature(let v): return "signature '\(v.rawValue)'"
        case .unixFD(let v): return v.description
        case .array(_, let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            return "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): return "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case .variant(let inner): return "<\(inner)>"
        }
    }
}

extension DBusValue: Equatable {
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.int16(let a), .int16(let b)): return a == b
        case (.uint16(let a), .uint16(let b)): return a == b
        case (.int32(let a), .int32(let b)): return a == b
        case (.uint32(let a), .uint32(let b)): return a == b
        case (.int64(let a), .int64(let b)): return a == b
        case (.uint64(let a), .uint64(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): return a == b
        case (.objectPath(let a), .objectPath(let b)): return a == b
        case (.signature(let a), .signature(let b)): return a == b
        case (.unixFD(let a), .unixFD(let b)): return a === b
        case (.array(let sa, let a), .array(let sb, let b)): return sa == sb && a == b
        case (.dictionary(let ka, let va, let a), .dictionary(let kb, let vb, let b)):
            return ka == kb && va == vb && a.count == b.count
                && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.structure(let a), .structure(let b)): return a == b
        case (.variant(let a), .variant(let b)): return a == b
        default: return false
        }
    }
}
