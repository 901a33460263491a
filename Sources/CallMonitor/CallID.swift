/// Call ids: random UUIDs (version 4, RFC 9562), lowercase 8-4-4-4-12.
public enum CallID {
    /// A UUID v4 from `SystemRandomNumberGenerator`.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A UUID v4 from the given generator (deterministic generators make deterministic ids).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var high: UInt64 = generator.next()
        var low: UInt64 = generator.next()
        // Version 4 in the high nibble of byte 6; variant 0b10 in the top bits of byte 8.
        high = (high & ~UInt64(0xF000)) | 0x4000
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let h = hex16(high)
        let l = hex16(low)
        var out = ""
        out.reserveCapacity(36)
        out += h.prefix(8)
        out += "-"
        out += h.dropFirst(8).prefix(4)
        out += "-"
        out += h.dropFirst(12)
        out += "-"
        out += l.prefix(4)
        out += "-"
        out += l.dropFirst(4)
        return out
    }

    /// True for a lowercase 8-4-4-4-12 hex string with version 4 and the RFC variant.
    public static func isWellFormed(_ id: String) -> Bool {
        let chars = Array(id.utf8)
        guard chars.count == 36 else { return false }
        for (i, c) in chars.enumerated() {
            switch i {
            case 8, 13, 18, 23:
                if c != UInt8(ascii: "-") { return false }
            default:
                let isDigit = c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
                let isLowerHex = c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f")
                if !(isDigit || isLowerHex) { return false }
            }
        }
        let variant = chars[19]
        return chars[14] == UInt8(ascii: "4")
            && (variant == UInt8(ascii: "8") || variant == UInt8(ascii: "9")
                || variant == UInt8(ascii: "a") || variant == UInt8(ascii: "b"))
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16, uppercase: false)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
