import CDBus
import Glibc

/// Appends arguments to a message body.
public struct MessageWriter {
    var iter = DBusMessageIter()

    init(message: Message) {
        dbus_message_iter_init_append(message.raw, &iter)
    }

    private init() {}

    mutating func appendBasic(_ code: Int32, _ value: DBusBasicValue) {
        var value = value
        // Only fails when out of memory, which libdbus itself does not survive either.
        precondition(dbus_message_iter_append_basic(&iter, code, &value) != 0, "libdbus out of memory")
    }

    mutating func appendString(_ code: Int32, _ string: String) {
        string.withCString { pointer in
            var value: UnsafePointer<CChar>? = pointer
            precondition(dbus_message_iter_append_basic(&iter, code, &value) != 0, "libdbus out of memory")
        }
    }

    /// Opens a container, lets `body` fill it, and closes it (or abandons it if `body` throws).
    mutating func appendContainer(
        _ code: Int32, contained signature: String?, _ body: (inout MessageWriter) throws -> Void
    ) throws {
        var inner = MessageWriter()
        let opened: dbus_bool_t
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, code, $0, &inner.iter) }
        } else {
            opened = dbus_message_iter_open_container(&iter, code, nil, &inner.iter)
        }
        precondition(opened != 0, "libdbus out of memory")
        do {
            try body(&inner)
        } catch {
            dbus_message_iter_abandon_container(&iter, &inner.iter)
            throw error
        }
        precondition(dbus_message_iter_close_container(&iter, &inner.iter) != 0, "libdbus out of memory")
    }

    public mutating func appendArray<S: Sequence>(
        elementSignature: String, _ items: S, _ element: (inout MessageWriter, S.Element) throws -> Void
    ) throws {
        try appendContainer(CDBUS_TYPE_ARRAY, contained: elementSignature) { inner in
            for item in items { try element(&inner, item) }
        }
    }

    public mutating func appendStruct(_ body: (inout MessageWriter) throws -> Void) throws {
        try appendContainer(CDBUS_TYPE_STRUCT, contained: nil, body)
    }

    public mutating func appendDictEntry(_ body: (inout MessageWriter) throws -> Void) throws {
        try appendContainer(CDBUS_TYPE_DICT_ENTRY, contained: nil, body)
    }

    public mutating func appendVariant(_ value: DBusValue) throws {
        try appendContainer(CDBUS_TYPE_VARIANT, contained: value.signatureString) { inner in
            try inner.append(value)
        }
    }

    /// Appends a value of any type, with its own signature.
    public mutating func append(_ value: DBusValue) throws {
        var basic = DBusBasicValue()
        switch value {
        case .byte(let v): basic.byt = v; appendBasic(CDBUS_TYPE_BYTE, basic)
        case .bool(let v): basic.bool_val = v ? 1 : 0; appendBasic(CDBUS_TYPE_BOOLEAN, basic)
        case .int16(let v): basic.i16 = v; appendBasic(CDBUS_TYPE_INT16, basic)
        case .uint16(let v): basic.u16 = v; appendBasic(CDBUS_TYPE_UINT16, basic)
        case .int32(let v): basic.i32 = v; appendBasic(CDBUS_TYPE_INT32, basic)
        case .uint32(let v): basic.u32 = v; appendBasic(CDBUS_TYPE_UINT32, basic)
        case .int64(let v): basic.i64 = dbus_int64_t(v); appendBasic(CDBUS_TYPE_INT64, basic)
        case .uint64(let v): basic.u64 = dbus_uint64_t(v); appendBasic(CDBUS_TYPE_UINT64, basic)
        case .double(let v): basic.dbl = v; appendBasic(CDBUS_TYPE_DOUBLE, basic)
        case .string(let v): appendString(CDBUS_TYPE_STRING, v)
        case .objectPath(let v): appendString(CDBUS_TYPE_OBJECT_PATH, v.rawValue)
        case .signature(let v): appendString(CDBUS_TYPE_SIGNATURE, v.rawValue)
        case .unixFD(let fd):
            guard fd.isOpen else { throw DBusError.invalidArgument("a closed file descriptor") }
            basic.fd = fd.rawValue  // libdbus sends a duplicate; ours stays open
            appendBasic(CDBUS_TYPE_UNIX_FD, basic)
        case .array(let element, let items):
            for item in items where item.signatureString != element.rawValue {
                throw DBusError.typeMismatch(expected: element.rawValue, actual: item.signatureString)
            }
            try appendArray(elementSignature: element.rawValue, items) { inner, item in try inner.append(item) }
        case .dictionary(let key, let valueSignature, let entries):
            try appendArray(elementSignature: "{" + key.rawValue + valueSignature.rawValue + "}", entries) {
                inner, entry in
                guard entry.key.signatureString == key.rawValue,
                      entry.value.signatureString == valueSignature.rawValue else {
                    throw DBusError.typeMismatch(
                        expected: "{" + key.rawValue + valueSignature.rawValue + "}",
                        actual: "{" + entry.key.signatureString + entry.value.signatureString + "}")
                }
                try inner.appendDictEntry { pair in
                    try pair.append(entry.key)
                    try pair.append(entry.value)
                }
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError.invalidArgument("an empty struct") }
            try appendStruct { inner in for field in fields { try inner.append(field) } }
        case .variant(let inner): try appendVariant(inner)
        }
    }

    /// Appends a value of a statically known type.
    public mutating func append<T: DBusType>(_ value: T) throws {
        try value.encode(to: &self)
    }
}
