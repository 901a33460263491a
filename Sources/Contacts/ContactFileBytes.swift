/// A line of a contacts file: its bytes, without the line end, borrowed from the file's buffer
/// while it is read (no reference counting per line: a phone's export has tens of thousands).
typealias LineBytes = Slice<UnsafeBufferPointer<UInt8>>

/// Byte helpers of the contacts reader.
enum ContactFileBytes {
    /// Lines without their `\n` or `\r\n`.
    static func lines(of bytes: UnsafeBufferPointer<UInt8>) -> [LineBytes] {
        var out: [LineBytes] = []
        var start = 0
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "\n") {
            out.append(trimmingCR(bytes[start..<index]))
            start = index + 1
        }
        if start < bytes.count { out.append(trimmingCR(bytes[start...])) }
        return out
    }

    private static func trimmingCR(_ line: LineBytes) -> LineBytes {
        line.last == UInt8(ascii: "\r") ? line.dropLast() : line
    }

    /// ASCII letters compared without case; `word` is upper-case ASCII.
    static func equalsIgnoringCase(_ bytes: LineBytes, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { expected in
            zip(bytes, expected).allSatisfy { byte, wanted in upperCased(byte) == upperCased(wanted) }
        }
    }

    private static func upperCased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 0x20 : byte
    }

    static func isBlank(_ line: LineBytes) -> Bool {
        line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
    }

    /// UTF-8 text, invalid sequences replaced.
    static func text(_ bytes: LineBytes) -> String { String(decoding: bytes, as: UTF8.self) }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    func trimmingBlanks() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
