import CDBus

/// A `PropertiesChanged` body (`sa{sv}as`) read from the message's own bytes rather than through
/// libdbus's iterators: a storm's every other signal is one, and walking its two entries with the
/// iterators cost about 7,000 instructions, a copy of the bytes and this read about 4,800.
/// libdbus has validated the bytes already (every length, alignment, UTF-8 string and
/// signature); this reads them still checking each bound, and leaves to the iterators
/// (`MessageReader.readProperties`) what it does not read itself: a value that is not of a basic
/// type, and bytes in the other byte order. The layout is the specification's ("Marshaling
/// (Wire Format)"); docs/ARCHITECTURE.md (`DBus`) says where it is used.
public enum ChangedProperties {
    public enum Outcome: Equatable {
        /// Every property was handed to the visitor.
        case read
        /// The interface is not the one asked for: nothing was visited.
        case otherInterface
        /// Not read here (nothing was visited): read it with `MessageReader.readProperties`.
        case unreadable
    }

    /// Visits each changed property of `interface` with its name and value. The caller has
    /// checked the body's signature (`Message.reader(checked: "sa{sv}as")`); the invalidated
    /// names are not read.
    public static func read(_ message: Message, interface: StaticString,
                            _ visit: (String, DBusValue) -> Void) -> Outcome {
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message.raw, &data, &length) != 0, let data else { return .unreadable }
        defer { dbus_free(data) }
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: Int(length))
        guard var body = WireCursor.body(of: bytes) else { return .unreadable }
        guard let said = body.stringBytes() else { return .unreadable }
        let same = interface.withUTF8Buffer { $0.elementsEqual(said) }
        guard same else { return .otherInterface }
        // Checked whole first, so that a property the visitor would get is never followed by a
        // fallback that reads them all again.
        var check = body
        guard check.properties(checkOnly: true, { _, _ in }) else { return .unreadable }
        _ = body.properties(checkOnly: false, visit)
        return .read
    }
}

/// A position in a marshalled message; every read is bounded by the message's bytes, and nil
/// when the bytes are not what it expects.
private struct WireCursor {
    let bytes: UnsafeRawBufferPointer
    /// From the message's first byte: the body starts 8-aligned, so alignments are the same
    /// counted from the body.
    var offset: Int

    /// The body of a little-endian message (the fixed header, its fields, the padding to 8).
    static func body(of bytes: UnsafeRawBufferPointer) -> WireCursor? {
        guard bytes.count >= 16, bytes[0] == UInt8(ascii: "l") else { return nil }
        var header = WireCursor(bytes: bytes, offset: 12)
        guard let fields = header.uint32(), let start = Int(exactly: 16 + UInt64(fields)) else { return nil }
        var body = WireCursor(bytes: bytes, offset: start)
        guard body.align(8) else { return nil }
        return body
    }

    mutating func align(_ boundary: Int) -> Bool {
        offset = (offset + boundary - 1) & ~(boundary - 1)
        return offset <= bytes.count
    }

    mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard align(size), bytes.count - offset >= size else { return nil }
        let value = T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += size
        return value
    }

    mutating func uint32() -> UInt32? { fixed(UInt32.self) }

    /// A string's bytes (without its terminating NUL), in place.
    mutating func stringBytes() -> UnsafeRawBufferPointer? {
        guard let count = uint32().map(Int.init), bytes.count - offset > count, bytes[offset + count] == 0 else {
            return nil
        }
        let text = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
        offset += count + 1
        return text
    }

    mutating func string() -> String? {
        stringBytes().map { String(decoding: $0, as: UTF8.self) }
    }

    /// The `a{sv}`; `checkOnly`: only whether every entry can be read here, nothing visited.
    mutating func properties(checkOnly: Bool, _ visit: (String, DBusValue) -> Void) -> Bool {
        guard let length = uint32().map(Int.init), align(8), bytes.count - offset >= length else { return false }
        let end = offset + length
        while offset < end {
            guard align(8) else { return false }
            if checkOnly {
                guard stringBytes() != nil, skipVariant() else { return false }
            } else {
                guard let name = string(), let value = variant() else { return false }
                visit(name, value)
            }
        }
        return offset == end
    }

    /// The basic type a variant holds (its one-letter signature read), or nil for any other.
    private mutating func variantType() -> Int32? {
        guard bytes.count - offset >= 3, bytes[offset] == 1, bytes[offset + 2] == 0 else { return nil }
        let code = Int32(bytes[offset + 1])
        offset += 3
        return code
    }

    /// Past a variant that `variant()` reads, making no value; false for one it does not read.
    mutating func skipVariant() -> Bool {
        switch variantType() {
        case CDBUS_TYPE_BYTE: return fixed(UInt8.self) != nil
        case CDBUS_TYPE_BOOLEAN: return uint32().map { $0 <= 1 } ?? false
        case CDBUS_TYPE_INT16, CDBUS_TYPE_UINT16: return fixed(UInt16.self) != nil
        case CDBUS_TYPE_INT32, CDBUS_TYPE_UINT32: return uint32() != nil
        case CDBUS_TYPE_INT64, CDBUS_TYPE_UINT64, CDBUS_TYPE_DOUBLE: return fixed(UInt64.self) != nil
        case CDBUS_TYPE_STRING, CDBUS_TYPE_OBJECT_PATH: return stringBytes() != nil
        default: return false
        }
    }

    /// A variant holding one basic type; nil for anything else.
    mutating func variant() -> DBusValue? {
        guard let code = variantType() else { return nil }
        switch code {
        case CDBUS_TYPE_BYTE: return fixed(UInt8.self).map { .byte($0) }
        case CDBUS_TYPE_BOOLEAN: return uint32().flatMap { $0 <= 1 ? .bool($0 == 1) : nil }
        case CDBUS_TYPE_INT16: return fixed(Int16.self).map { .int16($0) }
        case CDBUS_TYPE_UINT16: return fixed(UInt16.self).map { .uint16($0) }
        case CDBUS_TYPE_INT32: return fixed(Int32.self).map { .int32($0) }
        case CDBUS_TYPE_UINT32: return uint32().map { .uint32($0) }
        case CDBUS_TYPE_INT64: return fixed(Int64.self).map { .int64($0) }
        case CDBUS_TYPE_UINT64: return fixed(UInt64.self).map { .uint64($0) }
        case CDBUS_TYPE_DOUBLE: return fixed(UInt64.self).map { .double(Double(bitPattern: $0)) }
        case CDBUS_TYPE_STRING: return string().map { .string($0) }
        case CDBUS_TYPE_OBJECT_PATH: return string().map { .objectPath(ObjectPath(trusted: $0)) }
        default: return nil
        }
    }
}
