import CDBus
import Glibc

/// Reads a message body argument by argument, checking each type as it goes.
/// A mismatch is a thrown `DBusError`, never a trap.
public struct MessageReader {
    var iter = DBusMessageIter()
    /// Keeps the message alive: the iterator points into its buffer.
    let message: Message
    /// Set when the whole body's signature was checked up front (`Message.decode`): an array's
    /// element type then needs no second look, which would cost an allocation per array.
    var signatureChecked = false

    init(message: Message) {
        self.message = message
        dbus_message_iter_init(message.raw, &iter)
    }

    private init(parent: MessageReader) {
        message = parent.message
        signatureChecked = parent.signatureChecked
    }

    public var isAtEnd: Bool {
        mutating get { dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_INVALID }
    }

    /// The signature of the argument under the cursor ("" at the end).
    public mutating func currentSignature() -> String {
        guard !isAtEnd, let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    mutating func expect(_ code: Int32, _ signature: @autoclosure () -> String) throws {
        guard dbus_message_iter_get_arg_type(&iter) == code else {
            throw DBusError.typeMismatch(expected: signature(), actual: currentSignature())
        }
    }

    mutating func readBasic(_ code: Int32, _ signature: @autoclosure () -> String) throws -> DBusBasicValue {
        try expect(code, signature())
        var value = DBusBasicValue()
        dbus_message_iter_get_basic(&iter, &value)
        dbus_message_iter_next(&iter)
        return value
    }

    mutating func readString(_ code: Int32, _ signature: @autoclosure () -> String) throws -> String {
        let value = try readBasic(code, signature())
        guard let pointer = value.str else { return "" }
        return String(cString: pointer)
    }

    /// Reads a string and tells whether it is `expected`, compared in place with no string made
    /// (a signal's interface argument, which a handler only compares).
    public mutating func readString(equals expected: String) throws -> Bool {
        let value = try readBasic(CDBUS_TYPE_STRING, "s")
        guard let pointer = value.str else { return expected.isEmpty }
        return expected.withCString { strcmp($0, pointer) == 0 }
    }

    /// Reads one container (array, struct, dict entry or variant) with `body` positioned inside it.
    mutating func readContainer<T>(
        _ code: Int32, _ signature: @autoclosure () -> String, _ body: (inout MessageReader) throws -> T
    ) throws -> T {
        try expect(code, signature())
        var inner = MessageReader(parent: self)
        dbus_message_iter_recurse(&iter, &inner.iter)
        let result = try body(&inner)
        dbus_message_iter_next(&iter)
        return result
    }

    /// Reads an array whose elements have `elementSignature`, one element at a time.
    public mutating func readArray<T>(
        elementSignature: String, _ element: (inout MessageReader) throws -> T
    ) throws -> [T] {
        let expected = "a" + elementSignature
        // An empty array has no elements to check, so compare the declared element type.
        if !signatureChecked {
            let actual = currentSignature()
            guard actual == expected else { throw DBusError.typeMismatch(expected: expected, actual: actual) }
        }
        return try readContainer(CDBUS_TYPE_ARRAY, expected) { inner in
            var items: [T] = []
            while !inner.isAtEnd { items.append(try element(&inner)) }
            return items
        }
    }

    /// Reads a struct; `body` reads its fields in order and must consume them all.
    public mutating func readStruct<T>(signature: String, _ body: (inout MessageReader) throws -> T) throws -> T {
        try readContainer(CDBUS_TYPE_STRUCT, signature) { inner in
            let value = try body(&inner)
            guard inner.isAtEnd else {
                throw DBusError.typeMismatch(expected: signature, actual: "(…" + inner.currentSignature() + "…)")
            }
            return value
        }
    }

    /// Reads one dict entry `{KV}` inside an array.
    public mutating func readDictEntry<T>(signature: String, _ body: (inout MessageReader) throws -> T) throws -> T {
        try readContainer(CDBUS_TYPE_DICT_ENTRY, signature, body)
    }

    /// Reads an `a{sv}` entry by entry, without building a dictionary: `visit` gets each name
    /// and a reader positioned inside its variant; whatever it does not read is skipped. For a
    /// handler that wants a few properties of a set (a signal's worth of changes), this costs
    /// what those few cost.
    /// The array and its entries are walked with libdbus's iterators alone, and one reader serves
    /// every entry's value: half of a storm's signals come here, and a reader per container
    /// costs a copy and a release of the message each.
    ///
    /// Where the body's signature was checked (`Message.reader(checked:)`) the entries' types are
    /// known and not looked at again: each look is a call into libdbus's type reader. `last`
    /// says this is the body's last argument read: the cursor is not moved past it then, a
    /// step that costs as much as an entry.
    public mutating func readProperties(last: Bool = false, _ visit: (String, inout MessageReader) throws -> Void) throws {
        let trusted = signatureChecked
        if !trusted { try expect(CDBUS_TYPE_ARRAY, "a{sv}") }
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &entries)
        var value = MessageReader(parent: self)
        // What a variant holds is not in the body's signature.
        value.signatureChecked = false
        while dbus_message_iter_get_arg_type(&entries) != CDBUS_TYPE_INVALID {
            if !trusted { try MessageReader.expect(CDBUS_TYPE_DICT_ENTRY, "{sv}", at: &entries) }
            var entry = DBusMessageIter()
            dbus_message_iter_recurse(&entries, &entry)
            if !trusted { try MessageReader.expect(CDBUS_TYPE_STRING, "s", at: &entry) }
            var name = DBusBasicValue()
            dbus_message_iter_get_basic(&entry, &name)
            dbus_message_iter_next(&entry)
            if !trusted { try MessageReader.expect(CDBUS_TYPE_VARIANT, "v", at: &entry) }
            dbus_message_iter_recurse(&entry, &value.iter)
            try visit(name.str.map { String(cString: $0) } ?? "", &value)
            dbus_message_iter_next(&entries)
        }
        if !last { dbus_message_iter_next(&iter) }
    }

    /// `expect` for an iterator of libdbus's own: the same error, with the signature found there.
    private static func expect(_ code: Int32, _ signature: String, at iter: inout DBusMessageIter) throws {
        guard dbus_message_iter_get_arg_type(&iter) != code else { return }
        // What `currentSignature` says there.
        var actual = ""
        if dbus_message_iter_get_arg_type(&iter) != CDBUS_TYPE_INVALID, let raw = dbus_message_iter_get_signature(&iter) {
            actual = String(cString: raw)
            dbus_free(raw)
        }
        throw DBusError.typeMismatch(expected: signature, actual: actual)
    }

    /// Reads a variant's content, whatever its type.
    public mutating func readVariant() throws -> DBusValue {
        try readContainer(CDBUS_TYPE_VARIANT, "v") { inner in try inner.readValue() }
    }

    /// Reads the argument under the cursor, whatever its type.
    public mutating func readValue() throws -> DBusValue {
        let code = dbus_message_iter_get_arg_type(&iter)
        switch code {
        case CDBUS_TYPE_BYTE: return .byte(try readBasic(code, "y").byt)
        case CDBUS_TYPE_BOOLEAN: return .bool(try readBasic(code, "b").bool_val != 0)
        case CDBUS_TYPE_INT16: return .int16(try readBasic(code, "n").i16)
        case CDBUS_TYPE_UINT16: return .uint16(try readBasic(code, "q").u16)
        case CDBUS_TYPE_INT32: return .int32(try readBasic(code, "i").i32)
        case CDBUS_TYPE_UINT32: return .uint32(try readBasic(code, "u").u32)
        case CDBUS_TYPE_INT64: return .int64(Int64(try readBasic(code, "x").i64))
        case CDBUS_TYPE_UINT64: return .uint64(UInt64(try readBasic(code, "t").u64))
        case CDBUS_TYPE_DOUBLE: return .double(try readBasic(code, "d").dbl)
        case CDBUS_TYPE_STRING: return .string(try readString(code, "s"))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(ObjectPath(trusted: try readString(code, "o")))
        case CDBUS_TYPE_SIGNATURE: return .signature(Signature(trusted: try readString(code, "g")))
        case CDBUS_TYPE_UNIX_FD: return .unixFD(UnixFD(taking: try readBasic(code, "h").fd))
        case CDBUS_TYPE_VARIANT: return .variant(try readVariant())
        case CDBUS_TYPE_STRUCT:
            return try readContainer(code, "(…)") { inner in
                var fields: [DBusValue] = []
                while !inner.isAtEnd { fields.append(try inner.readValue()) }
                return .structure(fields)
            }
        case CDBUS_TYPE_ARRAY:
            let signature = currentSignature()
            let element = String(signature.dropFirst())
            if element.hasPrefix("{") {
                let inside = element.dropFirst().dropLast()
                let keySignature = String(inside.prefix(1))  // dict keys are always basic types
                let valueSignature = String(inside.dropFirst())
                return try readContainer(code, signature) { inner in
                    var entries: [DBusValue.DictEntry] = []
                    while !inner.isAtEnd {
                        entries.append(try inner.readDictEntry(signature: element) { entry in
                            DBusValue.DictEntry(try entry.readValue(), try entry.readValue())
                        })
                    }
                    return .dictionary(
                        keySignature: Signature(trusted: keySignature),
                        valueSignature: Signature(trusted: valueSignature), entries)
                }
            }
            return try readContainer(code, signature) { inner in
                var items: [DBusValue] = []
                while !inner.isAtEnd { items.append(try inner.readValue()) }
                return .array(elementSignature: Signature(trusted: element), items)
            }
        default:
            throw DBusError.typeMismatch(expected: "a value", actual: isAtEnd ? "end of body" : currentSignature())
        }
    }

    /// Reads one argument of a statically known type.
    public mutating func read<T: DBusType>(_ type: T.Type = T.self) throws -> T {
        try T(from: &self)
    }
}
