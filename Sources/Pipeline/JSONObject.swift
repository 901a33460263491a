import CallMonitor
import Glibc

/// One JSON object written in a fixed key order: the JSON Lines schema is stable and readable.
/// It is built as bytes, without intermediate strings: a storm of call events makes one line
/// per event, and this is most of what a line costs.
public struct JSONObject: EventFieldWriter {
    public private(set) var bytes: [UInt8]
    private var empty = true
    private let seconds: RFC3339Seconds?
    /// The live calls' parts that stay the same from one line to the next (`add(stable:)`).
    private let parts: CallLineParts?
    /// The parts of the call this line is about, found by its first part.
    private var entry: CallLineParts.Entry?

    /// `seconds`: a writer of many lines keeps one, so that a second already written is not
    /// broken into calendar fields again.
    public init(seconds: RFC3339Seconds? = nil) {
        self.init(seconds: seconds, parts: nil)
    }

    /// `parts`: a writer of many call lines keeps one, so that what stays the same of a call is
    /// not escaped and formatted again for each of its events.
    init(seconds: RFC3339Seconds?, parts: CallLineParts?) {
        self.seconds = seconds
        self.parts = parts
        bytes = []
        // A call line is about 600 bytes and often more: room for it at once, not grown and copied.
        bytes.reserveCapacity(1024)
        bytes.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ name: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        // Keys are literals, copied in one go. No array literal here or in the values below: each
        // would be an allocation, and a call line has 27 keys.
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A key known only at run time (a line rebuilt from the D-Bus API's fields), escaped.
    public mutating func key(_ name: String) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        JSONObject.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    // The values after a run-time `key`: the same text as `add` writes for the same value.
    public mutating func null() { literal("null") }
    public mutating func value(_ value: String) { JSONObject.appendQuoted(value, to: &bytes) }
    public mutating func value(_ value: Bool) { literal(value ? "true" : "false") }

    private mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
    public mutating func value(_ value: Int) { JSONObject.appendDecimal(value, to: &bytes) }

    public mutating func add(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { self.value(value) } else { null() }
    }

    public mutating func add(_ name: StaticString, _ value: Bool) {
        key(name)
        self.value(value)
    }

    public mutating func add(_ name: StaticString, _ value: Int) {
        key(name)
        self.value(value)
    }

    public mutating func add(_ name: StaticString, count value: Int?) {
        key(name)
        if let value { self.value(value) } else { null() }
    }

    /// Seconds with millisecond precision, or null.
    public mutating func add(_ name: StaticString, seconds value: Double?) {
        key(name)
        self.value(seconds: value)
    }

    public mutating func value(seconds value: Double?) {
        guard let value, value.isFinite, abs(value) < 1e15 else { return null() }
        let milliseconds = Int((value * 1000).rounded())
        if milliseconds < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = abs(milliseconds)
        JSONObject.appendDecimal(magnitude / 1000, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        JSONObject.appendDigits(magnitude % 1000, width: 3, to: &bytes)
    }

    /// An RFC 3339 UTC time with milliseconds, or null.
    public mutating func add(_ name: StaticString, time value: Double?) {
        key(name)
        guard let value else { return null() }
        bytes.append(UInt8(ascii: "\""))
        if let seconds { seconds.append(value, to: &bytes) } else { JSONObject.appendRFC3339(value, to: &bytes) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The part written as its bytes were the last time, when the call's fields it comes from
    /// are the same; else written, and kept (not for an ended call: `CallLineParts`).
    public mutating func add(stable part: Int, of call: CallSnapshot, contact: String?, redacted: Bool,
                             _ fields: (inout JSONObject) -> Void) {
        if part == 0 {
            // Kept parts begin with their comma: only after a first key.
            entry = empty ? nil : parts?.entry(for: call, contact: contact, redacted: redacted)
        }
        guard let entry, part < entry.parts.count, entry.call.id == call.id else { return fields(&self) }
        if let kept = entry.parts[part] {
            bytes.append(contentsOf: kept)
            return
        }
        let start = bytes.count
        fields(&self)
        entry.parts[part] = Array(bytes[start...])
    }

    /// A time given as microseconds since the epoch (`microseconds(of:)`): the same text as
    /// `add(_:time:)` writes for the time it came from.
    public mutating func value(microseconds value: UInt64) {
        bytes.append(UInt8(ascii: "\""))
        JSONObject.appendRFC3339(milliseconds: Int64(clamping: value / 1000), to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A time as whole microseconds since the epoch whose milliseconds are exactly those the
    /// JSON line shows (a product in floating point could round the other way at a boundary);
    /// the D-Bus API's times (`t`, systemd's convention). Before 1970: 0.
    public static func microseconds(of seconds: Double) -> UInt64 {
        let milliseconds = JSONObject.milliseconds(of: seconds)
        guard milliseconds > 0 else { return 0 }
        let fraction = seconds * 1000 - Double(milliseconds)
        let extra = fraction.isFinite ? UInt64(max(0, min(999, (fraction * 1000).rounded(.down)))) : 0
        return UInt64(milliseconds) * 1000 + extra
    }

    /// The whole milliseconds an RFC 3339 time shows (the epoch for what it cannot show).
    static func milliseconds(of seconds: Double) -> Int64 {
        // Times come from the clock and from the state file (a recovered run's start): no value may
        // trap the daemon. RFC 3339 has four-digit years; outside them (and for NaN) the epoch.
        let representable = seconds.isFinite && seconds >= -62_167_219_200 && seconds < 253_402_300_800
        return representable ? Int64((seconds * 1000).rounded(.down)) : 0
    }

    /// A value already written as JSON: a nested object's `lineBytes`, or an array.
    public mutating func add(_ name: StaticString, json value: [UInt8]) {
        key(name)
        bytes.append(contentsOf: value)
    }

    /// What ends `bytes`: a writer of lines may add it as it copies them (`lineBytes` copies them).
    public static let closingBrace = UInt8(ascii: "}")

    /// The finished object, without a newline.
    public var lineBytes: [UInt8] {
        var out = bytes
        out.append(JSONObject.closingBrace)
        return out
    }

    public var line: String { String(decoding: lineBytes, as: UTF8.self) }

    public static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // The magnitude, unsigned: `-Int.min` does not fit in an Int.
        appendDecimal(magnitude: value.magnitude, to: &bytes)
    }

    private static func appendDecimal(magnitude value: UInt, to bytes: inout [UInt8]) {
        if value >= 10 { appendDecimal(magnitude: value / 10, to: &bytes) }
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// `value` zero-padded to `width` digits.
    public static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// JSON string escaping: quotes, backslashes, every control character, and the two line
    /// separators JavaScript chokes on.
    public static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Native strings are contiguous UTF-8: scan and copy the bytes in one go.
        let copied = value.utf8.withContiguousStorageIfAvailable { raw -> Bool in
            for byte in raw where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte >= 0x7F { return false }
            bytes.append(contentsOf: raw)
            return true
        } ?? false
        if !copied {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": bytes.append(contentsOf: [0x5C, 0x22])
                case "\\": bytes.append(contentsOf: [0x5C, 0x5C])
                case "\n": bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case "\r": bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case "\t": bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
                    || scalar.value == 0x2028 || scalar.value == 0x2029:
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u")])
                    let hex = Array(String(scalar.value, radix: 16).utf8)
                    bytes.append(contentsOf: [UInt8](repeating: UInt8(ascii: "0"), count: 4 - hex.count) + hex)
                default: bytes.append(contentsOf: String(scalar).utf8)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public static func quote(_ value: String) -> String {
        var bytes: [UInt8] = []
        appendQuoted(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `2026-11-29T14:03:12.345Z`, written digit by digit (this runs three times per call line).
    public static func appendRFC3339(_ seconds: Double, to bytes: inout [UInt8]) {
        appendRFC3339(milliseconds: milliseconds(of: seconds), to: &bytes)
    }

    static func appendRFC3339(milliseconds: Int64, to bytes: inout [UInt8]) {
        // Floored, so a moment before 1970 keeps its fraction in 0...999 and its second below it.
        let (whole, fraction) = milliseconds >= 0 || milliseconds % 1000 == 0
            ? (milliseconds / 1000, milliseconds % 1000)
            : (milliseconds / 1000 - 1, milliseconds % 1000 + 1000)
        var time = time_t(whole)
        var parts = tm()
        gmtime_r(&time, &parts)
        appendDigits(Int(parts.tm_year) + 1900, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mon) + 1, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mday), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(Int(parts.tm_hour), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_min), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_sec), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(Int(fraction), width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }
}

