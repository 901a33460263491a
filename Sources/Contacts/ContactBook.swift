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
    package mutating func reserve(_ entries: Int) { names.reserveCapacity(entries) }

    package mutating func add(digits: (count: Int, last9: UInt64), name: String) {
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
    package static func sameNumber(_ first: (count: Int, last9: UInt64), _ second: (count: Int, last9: UInt64)) -> Bool {
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
    package static func digits<Digits: Sequence<UInt8>>(of number: Digits) -> (count: Int, last9: UInt64) {
        var count = 0
        var last9: UInt64 = 0
        for byte in number where byte >= 0x30 && byte <= 0x39 {
            count += 1
            last9 = (last9 * 10 + UInt64(byte - 0x30)) % 1_000_000_000
        }
        return (count, last9)
    }
}

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
