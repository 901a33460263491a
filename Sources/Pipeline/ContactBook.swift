/// Names for numbers, read from a phone's contacts export: vCard 3 or 4 (`FN` and every `TEL` of
/// a card; `N` when a card has no `FN`), or a two-column TSV (`NUMBER<TAB>NAME`, `#` comments).
///
/// **Which numbers match.** Only digits count (`+`, spaces, dashes, dots, brackets and a `tel:`
/// scheme are ignored). Two numbers match when their last 9 digits agree, or, when one of them
/// has only 7 or 8 digits, all of that one's digits; so `+49 171 1234567`, `0049 171 1234567`
/// and `0171 1234567` are one number, and `+47 12345678` is `12345678`. A number of fewer than 7
/// digits (a short code, a voicemail number) matches only the same digits exactly. Where several
/// contacts match, the longest agreement wins, then the first in the file.
public struct ContactBook: Sendable {
    /// Agreement of this many digits is enough for a match.
    public static let significantDigits = 9
    /// Below this many digits a number matches only exactly.
    public static let shortestSuffix = 7

    /// Names by key: the last `length` digits of a number as an integer, with `length` and the
    /// `bucket` of the contact's number (7, 8 or 9 for 9 and more digits; 0 for an exact short
    /// number) above them. Integers, so that a lookup (once per event) allocates nothing.
    /// Readable in the module (and by the `contacts` fuzz target) to list the numbers it holds.
    private(set) var names: [UInt64: String] = [:]
    /// Entries read (numbers with a name), duplicates included.
    public private(set) var count = 0

    public init() {}

    public init(entries: [(number: String, name: String)]) {
        for (number, name) in entries { add(number: number, name: name) }
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func add(number: String, name: String) {
        add(digits: ContactBook.digits(of: number.utf8), name: name)
    }

    /// Room for about `entries` numbers (a file's line count is an upper bound).
    mutating func reserve(_ entries: Int) { names.reserveCapacity(entries) }

    mutating func add(digits: (count: Int, last9: UInt64), name: String) {
        guard digits.count > 0, !name.isEmpty else { return }
        count += 1
        if digits.count < ContactBook.shortestSuffix {
            insert(ContactBook.key(bucket: 0, length: digits.count, digits.last9), name)
            return
        }
        let bucket = min(digits.count, ContactBook.significantDigits)
        for length in ContactBook.shortestSuffix...bucket {
            insert(ContactBook.key(bucket: bucket, length: length, digits.last9), name)
        }
    }

    /// The contact's name for `number`, or nil.
    public func name(for number: String) -> String? {
        guard !names.isEmpty else { return nil }
        let digits = ContactBook.digits(of: number.utf8)
        guard digits.count > 0 else { return nil }
        if digits.count < ContactBook.shortestSuffix {
            return names[ContactBook.key(bucket: 0, length: digits.count, digits.last9)]
        }
        let own = min(digits.count, ContactBook.significantDigits)
        // Longest agreement first: contacts of 9+ digits, then of 8, then of 7.
        for bucket in stride(from: ContactBook.significantDigits, through: ContactBook.shortestSuffix, by: -1) {
            if let name = names[ContactBook.key(bucket: bucket, length: min(own, bucket), digits.last9)] { return name }
        }
        return nil
    }

    /// Whether `a` and `b` are one caller's number by the rule above (national and international
    /// forms alike), with no book: for what was shown to which caller.
    public static func sameNumber(_ a: String, _ b: String) -> Bool {
        let first = digits(of: a.utf8), second = digits(of: b.utf8)
        guard first.count > 0, second.count > 0 else { return a == b }
        return sameNumber(first, second)
    }

    /// The rule above for two numbers' `digits(of:)`, each with at least one digit.
    static func sameNumber(_ first: (count: Int, last9: UInt64), _ second: (count: Int, last9: UInt64)) -> Bool {
        let shorter = min(first.count, second.count)
        if shorter < shortestSuffix { return first.count == second.count && first.last9 == second.last9 }
        let length = min(shorter, significantDigits)
        return first.last9 % powersOfTen[length] == second.last9 % powersOfTen[length]
    }

    private mutating func insert(_ key: UInt64, _ name: String) {
        if names[key] == nil { names[key] = name }
    }

    private static let powersOfTen: [UInt64] = (0...9).map { (0..<$0).reduce(1) { value, _ in value * 10 } }

    private static func key(bucket: Int, length: Int, _ last9: UInt64) -> UInt64 {
        UInt64(bucket) << 56 | UInt64(length) << 48 | last9 % powersOfTen[min(length, 9)]
    }

    /// How many ASCII digits a number has, and its last nine as an integer.
    static func digits<Digits: Sequence<UInt8>>(of number: Digits) -> (count: Int, last9: UInt64) {
        var count = 0
        var last9: UInt64 = 0
        for byte in number where byte >= 0x30 && byte <= 0x39 {
            count += 1
            last9 = (last9 * 10 + UInt64(byte - 0x30)) % 1_000_000_000
        }
        return (count, last9)
    }
}

/// What is wrong with a contacts file, in words (with the line where there is one).
public struct ContactFileError: Error, Equatable, CustomStringConvertible {
    public var line: Int?
    public var reason: String

    public init(line: Int? = nil, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { line.map { "line \($0): " + reason } ?? reason }
}

/// A line of a contacts file: its bytes, without the line end, borrowed from the file's buffer
/// while it is read (no reference counting per line: a phone's export has tens of thousands).
typealias LineBytes = Slice<UnsafeBufferPointer<UInt8>>

extension ContactBook {
    /// Reads a vCard file (a line `BEGIN:VCARD` anywhere) or else a TSV. Works on the bytes, not
    /// on Swift characters (bench/README.md: the time a read of 5,000 cards takes).
    public static func parse(_ text: String) throws(ContactFileError) -> ContactBook {
        try parse(Array(text.utf8))
    }

    public static func parse(_ bytes: [UInt8]) throws(ContactFileError) -> ContactBook {
        let (isVCard, hasContent) = bytes.withUnsafeBufferPointer { buffer in
            let lines = ContactFileBytes.lines(of: buffer)
            return (lines.contains { ContactFileBytes.equalsIgnoringCase($0, "BEGIN:VCARD") },
                    lines.contains { !ContactFileBytes.isBlank($0) && $0.first != UInt8(ascii: "#") })
        }
        var book = ContactBook()
        let outcome: Result<Void, ContactFileError>
        if isVCard {
            let (unfolded, lineNumbers) = VCardReader.unfold(bytes)
            outcome = unfolded.withUnsafeBufferPointer { buffer in
                Result { () throws(ContactFileError) in
                    try VCardReader.read(ContactFileBytes.lines(of: buffer), lineNumbers: lineNumbers, into: &book)
                }
            }
        } else {
            outcome = bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(ContactFileError) in try readTSV(ContactFileBytes.lines(of: buffer), into: &book) }
            }
        }
        try outcome.get()
        if book.isEmpty && hasContent {
            throw ContactFileError(isVCard ? "no card has both a name (FN or N) and a number (TEL)"
                                   : "no line is a number, a tab and a name")
        }
        return book
    }

    private static func readTSV(_ lines: [LineBytes], into book: inout ContactBook) throws(ContactFileError) {
        book.reserve(lines.count)
        let tab = UInt8(ascii: "\t")
        for (index, line) in lines.enumerated() {
            if ContactFileBytes.isBlank(line) || line.first == UInt8(ascii: "#") { continue }
            guard let split = line.firstIndex(of: tab) else {
                throw ContactFileError(line: index + 1, "expected NUMBER<TAB>NAME (or a vCard file)")
            }
            let rest = line[(split + 1)...]
            let name = rest.prefix { $0 != tab }
            // A header line (`number<TAB>name`) has no digits and is passed over.
            book.add(digits: ContactBook.digits(of: line[..<split]), name: ContactFileBytes.text(name).trimmingBlanks())
        }
    }
}

/// The vCard properties telwatch reads, from unfolded logical lines.
enum VCardReader {
    /// A card between its BEGIN and END (a struct: a tuple here cost a runtime metadata lookup
    /// per property).
    private struct OpenCard {
        var start: Int
        var name: String?
        var structured: String?
        var numbers: [LineBytes] = []
    }

    /// `lines`: the unfolded logical lines; `lineNumbers`: where each began in the file.
    static func read(_ lines: [LineBytes], lineNumbers: [Int], into book: inout ContactBook) throws(ContactFileError) {
        book.reserve(lines.count)
        var card: OpenCard?
        // Plain integer loops here and below: generic iteration (`zip`, `enumerated`, `indices`
        // of a slice) looked up type metadata at run time, a third of a read's time.
        for position in 0..<lines.count {
            let (line, index) = (lines[position], lineNumbers[position])
            guard let (property, value) = split(line) else { continue }
            if ContactFileBytes.equalsIgnoringCase(property, "BEGIN") && ContactFileBytes.equalsIgnoringCase(value, "VCARD") {
                if let open = card {
                    throw ContactFileError(line: open.start, "this card has no END:VCARD before the next BEGIN:VCARD")
                }
                card = OpenCard(start: index)
            } else if ContactFileBytes.equalsIgnoringCase(property, "END") && ContactFileBytes.equalsIgnoringCase(value, "VCARD") {
                guard let done = card else { throw ContactFileError(line: index, "END:VCARD without a BEGIN:VCARD") }
                if let name = done.name ?? done.structured {
                    for number in done.numbers { book.add(digits: ContactBook.digits(of: number), name: name) }
                }
                card = nil
            } else if ContactFileBytes.equalsIgnoringCase(property, "FN") {
                card?.name = ContactFileBytes.text(unescape(value)).trimmingBlanks().nonEmpty
            } else if ContactFileBytes.equalsIgnoringCase(property, "N") {
                card?.structured = structuredName(value)
            } else if ContactFileBytes.equalsIgnoringCase(property, "TEL") {
                card?.numbers.append(telephone(value))
            }
        }
        if let open = card { throw ContactFileError(line: open.start, "this card has no END:VCARD") }
    }

    /// The file's logical lines, one per `\n`, and the number of the physical line each began
    /// on: a line that starts with a space or a tab continues the one before (RFC 6350 §3.2),
    /// less that one character; empty lines are dropped.
    static func unfold(_ bytes: [UInt8]) -> (bytes: [UInt8], lineNumbers: [Int]) {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var numbers: [Int] = []
        bytes.withUnsafeBufferPointer { buffer in
            let lines = ContactFileBytes.lines(of: buffer)
            for index in 0..<lines.count {
                let line = lines[index]
                if let first = line.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t"), !numbers.isEmpty {
                    out.append(contentsOf: line.dropFirst())
                } else if !line.isEmpty {
                    if !numbers.isEmpty { out.append(UInt8(ascii: "\n")) }
                    out.append(contentsOf: line)
                    numbers.append(index + 1)
                }
            }
        }
        return (out, numbers)
    }

    /// `item1.TEL;TYPE="voice,cell":+1 555` → (`TEL`, `+1 555`): the group and parameters
    /// dropped; the value starts at the first colon outside quotes.
    static func split(_ line: LineBytes) -> (LineBytes, LineBytes)? {
        var quoted = false
        var nameEnd: Int?
        for index in line.startIndex..<line.endIndex {
            let byte = line[index]
            if byte == UInt8(ascii: "\"") { quoted.toggle() }
            guard !quoted else { continue }
            if nameEnd == nil && (byte == UInt8(ascii: ";") || byte == UInt8(ascii: ":")) { nameEnd = index }
            if byte == UInt8(ascii: ":") {
                var name = line[line.startIndex..<nameEnd!]
                if let dot = name.lastIndex(of: UInt8(ascii: ".")) { name = name[(dot + 1)...] }
                return (name, line[(index + 1)...])
            }
        }
        return nil
    }

    /// A text value's escapes (`\,` `\;` `\\` `\n`) undone.
    static func unescape(_ value: LineBytes) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var escaped = false
        for byte in value {
            if escaped {
                if !isEscapable(byte) { out.append(UInt8(ascii: "\\")) }
                out.append(byte == UInt8(ascii: "n") || byte == UInt8(ascii: "N") ? UInt8(ascii: "\n") : byte)
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else {
                out.append(byte)
            }
        }
        return out
    }

    /// A backslash escapes an ASCII character; before any other byte it is kept: dropped, it
    /// would join the bytes around it, which a broken export may leave as invalid UTF-8, into a
    /// character the file never had.
    static func isEscapable(_ byte: UInt8) -> Bool { byte < 0x80 }

    /// `N:Family;Given;Middle;Prefix;Suffix` → `Given Middle Family`, for a card without `FN`.
    static func structuredName(_ value: LineBytes) -> String? {
        var parts: [[UInt8]] = [[]]
        var escaped = false
        for byte in value {
            if escaped {
                if !isEscapable(byte) { parts[parts.count - 1].append(UInt8(ascii: "\\")) }
                parts[parts.count - 1].append(byte)
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: ";") {
                parts.append([])
            } else {
                parts[parts.count - 1].append(byte)
            }
        }
        let ordered = [parts.count > 1 ? parts[1] : [], parts.count > 2 ? parts[2] : [], parts[0]]
        return ordered.map { ContactFileBytes.text($0).replacing(",", with: " ").trimmingBlanks() }.filter { !$0.isEmpty }
            .joined(separator: " ").nonEmpty
    }

    /// A `TEL` value: text, or a `tel:` URI whose parameters (`;ext=`) are dropped.
    static func telephone(_ value: LineBytes) -> LineBytes {
        guard value.count >= 4, ContactFileBytes.equalsIgnoringCase(value.prefix(4), "tel:") else { return value }
        return value.dropFirst(4).prefix { $0 != UInt8(ascii: ";") }
    }
}

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
