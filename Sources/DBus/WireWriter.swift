/// A signal written in D-Bus's wire format (little-endian) straight into bytes, and handed to
/// libdbus whole (`Message(marshalled:)`, which checks every byte of it): for a signal sent for
/// every event, where libdbus's iterator API costs an allocation and a check per container. Keys
/// are string literals; a string's bytes are copied as they are (Swift strings are valid UTF-8; a
/// NUL, which D-Bus forbids, makes the message refused as a whole).
public struct WireSignal {
    private var bytes: [UInt8] = []
    private var bodyStart = 0

    /// Begins the message: its header with the body's `signature`; the body follows.
    public init(path: ObjectPath, interface: String, member: String, signature: StaticString) {
        bytes.reserveCapacity(1024)
        // Little-endian, a signal, NO_REPLY_EXPECTED (as libdbus marks a signal), version 1; the
        // body's length (filled in by `message()`); a serial (the connection gives the copy it sends
        // its own); the header fields' length.
        bytes.append(contentsOf: [UInt8(ascii: "l"), 4, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
        let fieldsLength = 12
        let fieldsStart = bytes.count  // 8-aligned: the first struct needs no padding
        headerField(1, UInt8(ascii: "o"), path.rawValue)
        headerField(2, UInt8(ascii: "s"), interface)
        headerField(3, UInt8(ascii: "s"), member)
        align(8)
        bytes.append(contentsOf: [8, 1, UInt8(ascii: "g"), 0])
        signature.withUTF8Buffer { signature in
            bytes.append(UInt8(signature.count))
            bytes.append(contentsOf: signature)
        }
        bytes.append(0)
        put32(at: fieldsLength, UInt32(bytes.count - fieldsStart))
        align(8)
        bodyStart = bytes.count
    }

    private mutating func headerField(_ code: UInt8, _ type: UInt8, _ value: String) {
        align(8)
        bytes.append(code)
        bytes.append(1)
        bytes.append(type)
        bytes.append(0)
        appendString(value)
    }

    // MARK: The body

    /// A string argument.
    public mutating func string(_ value: String) { appendString(value) }

    /// Where an `a{sv}` argument began: its entries follow, then `endVardict`.
    public struct VardictMark {
        let lengthAt: Int
        let start: Int
    }

    public mutating func beginVardict() -> VardictMark {
        align(4)
        let lengthAt = bytes.count
        append32(0)
        align(8)  // a dict entry's alignment, also when the array is empty
        return VardictMark(lengthAt: lengthAt, start: bytes.count)
    }

    public mutating func endVardict(_ mark: VardictMark) {
        put32(at: mark.lengthAt, UInt32(bytes.count - mark.start))
    }

    /// `{sv}` entries, between `beginVardict` and `endVardict`.
    public mutating func entry(_ key: StaticString, string value: String) {
        entryHead(key, UInt8(ascii: "s"))
        appendString(value)
    }

    public mutating func entry(_ key: StaticString, bool value: Bool) {
        entryHead(key, UInt8(ascii: "b"))
        align(4)
        append32(value ? 1 : 0)
    }

    public mutating func entry(_ key: StaticString, int64 value: Int64) {
        entryHead(key, UInt8(ascii: "x"))
        append64(UInt64(bitPattern: value))
    }

    public mutating func entry(_ key: StaticString, uint64 value: UInt64) {
        entryHead(key, UInt8(ascii: "t"))
        append64(value)
    }

    public mutating func entry(_ key: StaticString, double value: Double) {
        entryHead(key, UInt8(ascii: "d"))
        append64(value.bitPattern)
    }

    /// An empty array of `element` (`s`, `t`, `d`, `x` or `b`): how a key with no value keeps its
    /// place and its type, D-Bus having no null.
    public mutating func entry(_ key: StaticString, emptyArrayOf element: UInt8) {
        align(8)
        appendKey(key)
        bytes.append(2)
        bytes.append(UInt8(ascii: "a"))
        bytes.append(element)
        bytes.append(0)
        align(4)
        append32(0)
        if element == UInt8(ascii: "t") || element == UInt8(ascii: "d") || element == UInt8(ascii: "x") { align(8) }
    }

    /// An entry whose key is known only at run time (a property's name) and whose value is of a
    /// basic type (`s`, `b`, `u`, `x`, `t`, `d`); false for any other value, which is not written.
    @discardableResult
    public mutating func entry(_ key: String, _ value: DBusValue) -> Bool {
        let type: UInt8
        switch value {
        case .string: type = UInt8(ascii: "s")
        case .bool: type = UInt8(ascii: "b")
        case .uint32: type = UInt8(ascii: "u")
        case .int64: type = UInt8(ascii: "x")
        case .uint64: type = UInt8(ascii: "t")
        case .double: type = UInt8(ascii: "d")
        default: return false
        }
        align(8)
        appendString(key)
        bytes.append(1)
        bytes.append(type)
        bytes.append(0)
        switch value {
        case .string(let text): appendString(text)
        case .bool(let flag): align(4); append32(flag ? 1 : 0)
        case .uint32(let number): align(4); append32(number)
        case .int64(let number): append64(UInt64(bitPattern: number))
        case .uint64(let number): append64(number)
        case .double(let number): append64(number.bitPattern)
        default: break
        }
        return true
    }

    /// An empty `as` argument (the `invalidated` of a PropertiesChanged that invalidates nothing).
    public mutating func emptyStringArray() {
        align(4)
        append32(0)
    }

    /// The message, checked by libdbus; nil if it refused it.
    public func message() -> Message? {
        var whole = bytes
        let bodyLength = UInt32(bytes.count - bodyStart)
        for index in 0..<4 { whole[4 + index] = UInt8(truncatingIfNeeded: bodyLength >> (8 * index)) }
        return try? Message(marshalled: whole)
    }

    // MARK: Wire format

    private mutating func entryHead(_ key: StaticString, _ type: UInt8) {
        align(8)
        appendKey(key)
        bytes.append(1)
        bytes.append(type)
        bytes.append(0)
    }

    private mutating func appendKey(_ key: StaticString) {
        align(4)
        key.withUTF8Buffer { text in
            append32(UInt32(text.count))
            bytes.append(contentsOf: text)
        }
        bytes.append(0)
    }

    private mutating func appendString(_ value: String) {
        align(4)
        var value = value
        value.withUTF8 { text in
            append32(UInt32(text.count))
            bytes.append(contentsOf: text)
        }
        bytes.append(0)
    }

    private mutating func align(_ boundary: Int) {
        while bytes.count % boundary != 0 { bytes.append(0) }
    }

    private mutating func append32(_ value: UInt32) {
        for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    private mutating func append64(_ value: UInt64) {
        align(8)
        for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    private mutating func put32(at offset: Int, _ value: UInt32) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }
}
