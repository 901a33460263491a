import CDBus

/// An `a{sv}` written entry by entry straight into a message body, with no `DBusValue` in
/// between: what a signal sent for every event is built with. Keys are string literals (their
/// bytes are passed to libdbus as they are); the value's own signature goes in its variant.
public struct VardictWriter {
    var array: MessageWriter

    public mutating func add(_ key: StaticString, string value: String) {
        entry(key, "s") { $0.appendString(CDBUS_TYPE_STRING, value) }
    }

    public mutating func add(_ key: StaticString, bool value: Bool) {
        var basic = DBusBasicValue()
        basic.bool_val = value ? 1 : 0
        entry(key, "b") { $0.appendBasic(CDBUS_TYPE_BOOLEAN, basic) }
    }

    public mutating func add(_ key: StaticString, int64 value: Int64) {
        var basic = DBusBasicValue()
        basic.i64 = dbus_int64_t(value)
        entry(key, "x") { $0.appendBasic(CDBUS_TYPE_INT64, basic) }
    }

    public mutating func add(_ key: StaticString, uint64 value: UInt64) {
        var basic = DBusBasicValue()
        basic.u64 = dbus_uint64_t(value)
        entry(key, "t") { $0.appendBasic(CDBUS_TYPE_UINT64, basic) }
    }

    public mutating func add(_ key: StaticString, double value: Double) {
        var basic = DBusBasicValue()
        basic.dbl = value
        entry(key, "d") { $0.appendBasic(CDBUS_TYPE_DOUBLE, basic) }
    }

    /// An empty array of `element` (`as`, `at`, `ad`…): how a key with no value keeps its place
    /// and its type, D-Bus having no null.
    public mutating func addEmptyArray(_ key: StaticString, of element: StaticString) {
        let signature: StaticString
        switch element.description {
        case "s": signature = "as"
        case "t": signature = "at"
        case "d": signature = "ad"
        case "x": signature = "ax"
        case "b": signature = "ab"
        default: preconditionFailure("addEmptyArray: no array signature for '\(element)'")
        }
        entry(key, signature) { inner in
            MessageWriter.withCString(element) { code in
                var empty = MessageWriter()
                precondition(dbus_message_iter_open_container(&inner.iter, CDBUS_TYPE_ARRAY, code, &empty.iter) != 0,
                             "libdbus out of memory")
                precondition(dbus_message_iter_close_container(&inner.iter, &empty.iter) != 0, "libdbus out of memory")
            }
        }
    }

    /// Any value, for entries built at run time (a property map).
    public mutating func add(_ key: String, _ value: DBusValue) throws {
        try array.appendDictEntry { pair in
            pair.appendString(CDBUS_TYPE_STRING, key)
            try pair.appendVariant(value)
        }
    }

    private mutating func entry(_ key: StaticString, _ signature: StaticString, _ value: (inout MessageWriter) -> Void) {
        var pair = MessageWriter()
        precondition(dbus_message_iter_open_container(&array.iter, CDBUS_TYPE_DICT_ENTRY, nil, &pair.iter) != 0,
                     "libdbus out of memory")
        MessageWriter.withCString(key) { text in
            var pointer: UnsafePointer<CChar>? = text
            precondition(dbus_message_iter_append_basic(&pair.iter, CDBUS_TYPE_STRING, &pointer) != 0,
                         "libdbus out of memory")
        }
        MessageWriter.withCString(signature) { code in
            var variant = MessageWriter()
            precondition(dbus_message_iter_open_container(&pair.iter, CDBUS_TYPE_VARIANT, code, &variant.iter) != 0,
                         "libdbus out of memory")
            value(&variant)
            precondition(dbus_message_iter_close_container(&pair.iter, &variant.iter) != 0, "libdbus out of memory")
        }
        precondition(dbus_message_iter_close_container(&array.iter, &pair.iter) != 0, "libdbus out of memory")
    }
}

extension MessageWriter {
    /// A literal as a C string without a copy: string literals are stored NUL-terminated.
    static func withCString<T>(_ text: StaticString, _ body: (UnsafePointer<CChar>) -> T) -> T {
        guard text.hasPointerRepresentation else { return text.description.withCString(body) }
        return text.utf8Start.withMemoryRebound(to: CChar.self, capacity: text.utf8CodeUnitCount + 1, body)
    }

    /// Appends an `a{sv}` whose entries `body` writes.
    public mutating func appendVardict(_ body: (inout VardictWriter) throws -> Void) throws {
        try appendContainer(CDBUS_TYPE_ARRAY, contained: "{sv}") { inner in
            var writer = VardictWriter(array: inner)
            try body(&writer)
            inner = writer.array
        }
    }
}

extension Message {
    /// Appends one string argument (a signal's name-like first argument, say).
    public func append(string: String) {
        var writer = MessageWriter(message: self)
        writer.appendString(CDBUS_TYPE_STRING, string)
    }

    /// Appends an `a{sv}` argument written entry by entry.
    public func appendVardict(_ body: (inout VardictWriter) throws -> Void) throws {
        var writer = MessageWriter(message: self)
        try writer.appendVardict(body)
    }
}

/// A body of `s a{sv}` (a name, then its fields) written in one pass, for a signal whose name
/// is known only once its first field is: the string goes first, then each entry as it comes.
public struct NamedVardictBody {
    private var top: MessageWriter
    public var entries: VardictWriter

    public init(_ message: Message, name: String) {
        top = MessageWriter(message: message)
        top.appendString(CDBUS_TYPE_STRING, name)
        var array = MessageWriter()
        precondition(dbus_message_iter_open_container(&top.iter, CDBUS_TYPE_ARRAY, "{sv}", &array.iter) != 0,
                     "libdbus out of memory")
        entries = VardictWriter(array: array)
    }

    /// Closes the `a{sv}`: the message is complete.
    public mutating func finish() {
        precondition(dbus_message_iter_close_container(&top.iter, &entries.array.iter) != 0, "libdbus out of memory")
    }

    /// Leaves the message unfinished (it is not to be sent).
    public mutating func abandon() {
        dbus_message_iter_abandon_container(&top.iter, &entries.array.iter)
    }
}
