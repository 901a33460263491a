import CDBus
import Glibc

public enum MessageType: Sendable, Equatable {
    case methodCall, methodReturn, error, signal, other(Int32)

    init(_ code: Int32) {
        switch code {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: self = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: self = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: self = .error
        case CDBUS_MESSAGE_TYPE_SIGNAL: self = .signal
        default: self = .other(code)
        }
    }
}

/// One D-Bus message: its header fields and its body.
public final class Message {
    let raw: OpaquePointer

    /// Adopts a reference the caller already owns.
    init(adopting raw: OpaquePointer) { self.raw = raw }

    /// Takes a new reference on a message libdbus lends us.
    init(retaining raw: OpaquePointer) {
        self.raw = raw
        dbus_message_ref(raw)
    }

    deinit { dbus_message_unref(raw) }

    // MARK: Making messages

    public static func methodCall(
        destination: String?, path: ObjectPath, interface: String?, member: String
    ) throws -> Message {
        if let destination { try DBusName.check(busName: destination) }
        if let interface { try DBusName.check(interface: interface) }
        try DBusName.check(member: member)
        guard let raw = dbus_message_new_method_call(destination, path.rawValue, interface, member) else {
            throw DBusError.invalidArgument("cannot build method call \(member)")
        }
        return Message(adopting: raw)
    }

    public static func signal(path: ObjectPath, interface: String, member: String) throws -> Message {
        try DBusName.check(interface: interface)
        try DBusName.check(member: member)
        guard let raw = dbus_message_new_signal(path.rawValue, interface, member) else {
            throw DBusError.invalidArgument("cannot build signal \(member)")
        }
        return Message(adopting: raw)
    }

    /// A message that was already sent carries its serial; a copy can be sent again.
    func sendable() -> Message {
        dbus_message_get_serial(raw) == 0 ? self : Message(adopting: dbus_message_copy(raw))
    }

    /// A successful reply to this method call.
    public func makeReply() -> Message {
        Message(adopting: dbus_message_new_method_return(raw))
    }

    /// An error reply to this method call.
    public func makeErrorReply(name: String, message text: String) -> Message {
        let name = DBusName.isValidErrorName(name) ? name : "org.freedesktop.DBus.Error.Failed"
        return Message(adopting: dbus_message_new_error(raw, name, text))
    }

    /// Parses a message from its wire form; bytes that are not a valid message are a thrown error.
    public convenience init(marshalled bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { throw DBusError.invalidArgument("an empty message") }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let raw = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                dbus_message_demarshal($0, Int32(buffer.count), &error)
            }
        }
        guard let raw else { throw DBusError.take(&error) }
        self.init(adopting: raw)
    }

    /// The message in wire form.
    public func marshal() -> [UInt8] {
        // The wire format requires a serial; an unsent message gets one on a copy.
        var source = self
        if serial == 0 {
            source = Message(adopting: dbus_message_copy(raw))
            dbus_message_set_serial(source.raw, 1)
        }
        var pointer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        let marshalled = withExtendedLifetime(source) { dbus_message_marshal(source.raw, &pointer, &length) }
        guard marshalled != 0, let pointer else { return [] }
        defer { dbus_free(pointer) }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }

    // MARK: Header

    public var type: MessageType { MessageType(dbus_message_get_type(raw)) }
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    public var destination: String? { dbus_message_get_destination(raw).map { String(cString: $0) } }
    public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    public var serial: UInt32 { dbus_message_get_serial(raw) }
    public var replySerial: UInt32 { dbus_message_get_reply_serial(raw) }

    /// Whether the sender asked for no reply.
    public var noReply: Bool {
        get { dbus_message_get_no_reply(raw) != 0 }
        set { dbus_message_set_no_reply(raw, newValue ? 1 : 0) }
    }

    /// Compares a header field with a string without building a Swift string (the per-signal path).
    func headerField(_ field: HeaderField, equals value: String) -> Bool {
        let pointer: UnsafePointer<CChar>?
        switch field {
        case .sender: pointer = dbus_message_get_sender(raw)
        case .path: pointer = dbus_message_get_path(raw)
        case .interface: pointer = dbus_message_get_interface(raw)
        case .member: pointer = dbus_message_get_member(raw)
        case .destination: pointer = dbus_message_get_destination(raw)
        }
        guard let pointer else { return false }
        return value.withCString { strcmp($0, pointer) == 0 }
    }

    enum HeaderField { case sender, path, interface, member, destination }

    /// True when the body's signature is exactly `expected`.
    public func hasSignature(_ expected: String) -> Bool {
        guard let actual = dbus_message_get_signature(raw) else { return expected.isEmpty }
        return expected.withCString { strcmp($0, actual) == 0 }
    }

    // MARK: Body

    /// A reader positioned at the first argument.
    public func reader() -> MessageReader { MessageReader(message: self) }

    /// A reader of a body whose signature is `expected` (checked here, in place), or nil: what it
    /// reads needs no second look at each container's type.
    public func reader(checked expected: StaticString) -> MessageReader? {
        guard hasSignature(expected) else { return nil }
        var reader = MessageReader(message: self)
        reader.signatureChecked = true
        return reader
    }

    /// Whether the body's signature is `expected`, compared in place: no string is built, as
    /// this runs for every signal.
    public func hasSignature(_ expected: StaticString) -> Bool {
        guard let actual = dbus_message_get_signature(raw) else { return false }
        return expected.withUTF8Buffer { bytes in
            guard let expected = bytes.baseAddress else { return actual.pointee == 0 }
            return strlen(actual) == bytes.count && memcmp(actual, expected, bytes.count) == 0
        }
    }

    // Decoding has one overload per arity, not a parameter pack: Debian 13's Swift 6.0.3 cannot
    // type-check `try?` around a pack-returning call, and crashes at -O on iterating a pack
    // (docs/platforms.md). Each overload checks the signature in place and allocates nothing.

    /// Decodes the whole body as one value of `A`; a body of another signature is a thrown error.
    public func decode<A: DBusType>(_: A.Type) throws -> A {
        var reader = try checkedReader(A.dbusSignature)
        return try A(from: &reader)
    }

    /// Decodes the whole body as the given types; a body of another signature is a thrown error.
    public func decode<A: DBusType, B: DBusType>(_: A.Type, _: B.Type) throws -> (A, B) {
        var reader = try checkedReader(A.dbusSignature, B.dbusSignature)
        let a = try A(from: &reader)
        return (a, try B(from: &reader))
    }

    /// Decodes the whole body as the given types; a body of another signature is a thrown error.
    public func decode<A: DBusType, B: DBusType, C: DBusType>(_: A.Type, _: B.Type, _: C.Type) throws -> (A, B, C) {
        var reader = try checkedReader(A.dbusSignature, B.dbusSignature, C.dbusSignature)
        let a = try A(from: &reader)
        let b = try B(from: &reader)
        return (a, b, try C(from: &reader))
    }

    /// Decodes the whole body as the given types; a body of another signature is a thrown error.
    public func decode<A: DBusType, B: DBusType, C: DBusType, D: DBusType>(
        _: A.Type, _: B.Type, _: C.Type, _: D.Type
    ) throws -> (A, B, C, D) {
        var reader = try checkedReader(A.dbusSignature, B.dbusSignature, C.dbusSignature, D.dbusSignature)
        let a = try A(from: &reader)
        let b = try B(from: &reader)
        let c = try C(from: &reader)
        return (a, b, c, try D(from: &reader))
    }

    /// Decodes the whole body as the given types; a body of another signature is a thrown error.
    public func decode<A: DBusType, B: DBusType, C: DBusType, D: DBusType, E: DBusType>(
        _: A.Type, _: B.Type, _: C.Type, _: D.Type, _: E.Type
    ) throws -> (A, B, C, D, E) {
        var reader = try checkedReader(A.dbusSignature, B.dbusSignature, C.dbusSignature, D.dbusSignature,
                                       E.dbusSignature)
        let a = try A(from: &reader)
        let b = try B(from: &reader)
        let c = try C(from: &reader)
        let d = try D(from: &reader)
        return (a, b, c, d, try E(from: &reader))
    }

    /// A reader at the first argument once the body's signature is the pieces in order; else the
    /// mismatch, thrown.
    private func checkedReader(_ a: String, _ b: String = "", _ c: String = "", _ d: String = "",
                               _ e: String = "") throws -> MessageReader {
        guard bodyHasSignature(a, b, c, d, e) else {
            throw DBusError.signatureMismatch(expected: a + b + c + d + e, actual: signature)
        }
        var reader = reader()
        reader.signatureChecked = true
        return reader
    }

    /// Compares the body's signature with the pieces in order, without building a string: this
    /// runs for every signal.
    private func bodyHasSignature(_ a: String, _ b: String, _ c: String, _ d: String, _ e: String) -> Bool {
        guard var cursor = dbus_message_get_signature(raw),
              Self.consume(a, at: &cursor), Self.consume(b, at: &cursor), Self.consume(c, at: &cursor),
              Self.consume(d, at: &cursor), Self.consume(e, at: &cursor)
        else { return false }
        return cursor.pointee == 0
    }

    /// Moves `cursor` past `piece` when the signature continues with it.
    private static func consume(_ piece: String, at cursor: inout UnsafePointer<CChar>) -> Bool {
        var piece = piece
        return piece.withUTF8 { bytes in
            for byte in bytes {
                guard UInt8(bitPattern: cursor.pointee) == byte else { return false }
                cursor += 1
            }
            return true
        }
    }

    /// Decodes the whole body as dynamically typed values.
    public func values() throws -> [DBusValue] {
        var reader = reader()
        var out: [DBusValue] = []
        while !reader.isAtEnd { out.append(try reader.readValue()) }
        return out
    }

    /// Appends typed arguments to the body.
    public func append<each T: DBusType>(_ values: repeat each T) throws {
        var writer = MessageWriter(message: self)
        repeat try (each values).encode(to: &writer)
    }

    /// Appends dynamically typed arguments to the body.
    public func append(values: [DBusValue]) throws {
        var writer = MessageWriter(message: self)
        for value in values { try writer.append(value) }
    }

    /// For error replies: the error as a Swift error, with its name and text.
    public var asError: DBusError? {
        guard type == .error else { return nil }
        let name = errorName ?? "org.freedesktop.DBus.Error.Failed"
        var text = ""
        if let first = dbus_message_get_signature(raw), first.pointee == CChar(UInt8(ascii: "s")) {
            var reader = reader()
            text = (try? reader.read(String.self)) ?? ""
        }
        if name == DBusError.noReplyName || name == DBusError.timeoutName { return .timedOut(text) }
        return .remote(name: name, message: text)
    }
}

extension Message: CustomStringConvertible {
    public var description: String {
        "\(type) sender=\(sender ?? "-") path=\(path ?? "-") interface=\(interface ?? "-") "
            + "member=\(member ?? "-") serial=\(serial) signature='\(signature)'"
    }
}
