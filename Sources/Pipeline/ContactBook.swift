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
    private var names: [UInt64: String] = [:]
    /// Entries read (numbers with a name), duplicates included.
    public private(set) var count = 0

    public init() {}

    public init(entries: [(number: String, name: String)]) {
        for (number, name) in entries { add(number: number, name: name) }
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func add(number: String, name: String) {
        let digits = ContactBook.digits(of: number)
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
        let digits = ContactBook.digits(of: number)
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

    private mutating func insert(_ key: UInt64, _ name: String) {
        if names[key] == nil { names[key] = name }
    }

    private static let powersOfTen: [UInt64] = (0...9).map { (0..<$0).reduce(1) { value, _ in value * 10 } }

    private static func key(bucket: Int, length: Int, _ last9: UInt64) -> UInt64 {
        UInt64(bucket) << 56 | UInt64(length) << 48 | last9 % powersOfTen[min(length, 9)]
    }

    /// How many ASCII digits a number has, and its last nine as an integer.
    static func digits(of number: String) -> (count: Int, last9: UInt64) {
        var count = 0
        var last9: UInt64 = 0
        for byte in number.utf8 where byte >= 0x30 && byte <= 0x39 {
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

extension ContactBook {
    /// Reads a vCard file (a line `BEGIN:VCARD` anywhere) or else a TSV.
    public static func parse(_ text: String) throws(ContactFileError) -> ContactBook {
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
            .map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        let isVCard = lines.contains { $0.count == 11 && $0.uppercased() == "BEGIN:VCARD" }
        var book = ContactBook()
        if isVCard { try VCardReader.read(lines, into: &book) } else { try readTSV(lines, into: &book) }
        if book.isEmpty && lines.contains(where: { !$0.allSatisfy(\.isWhitespace) && !$0.hasPrefix("#") }) {
            throw ContactFileError(isVCard ? "no card has both a name (FN or N) and a number (TEL)"
                                   : "no line is a number, a tab and a name")
        }
        return book
    }

    private static func readTSV(_ lines: [Substring], into book: inout ContactBook) throws(ContactFileError) {
        for (index, line) in lines.enumerated() {
            if line.allSatisfy(\.isWhitespace) || line.hasPrefix("#") { continue }
            guard let tab = line.firstIndex(of: "\t") else {
                throw ContactFileError(line: index + 1, "expected NUMBER<TAB>NAME (or a vCard file)")
            }
            let name = line[line.index(after: tab)...].split(separator: "\t", omittingEmptySubsequences: false)[0]
            // A header line (`number<TAB>name`) has no digits and is passed over.
            book.add(number: String(line[..<tab]), name: name.trimmingBlanks())
        }
    }
}

/// The vCard properties telwatch reads, from unfolded logical lines.
enum VCardReader {
    static func read(_ lines: [Substring], into book: inout ContactBook) throws(ContactFileError) {
        var card: (start: Int, name: String?, structured: String?, numbers: [String])?
        for (index, line) in unfold(lines) {
            guard let (property, value) = split(line) else { continue }
            switch property {
            case "BEGIN" where value.uppercased() == "VCARD":
                if let open = card {
                    throw ContactFileError(line: open.start, "this card has no END:VCARD before the next BEGIN:VCARD")
                }
                card = (index, nil, nil, [])
            case "END" where value.uppercased() == "VCARD":
                guard let done = card else { throw ContactFileError(line: index, "END:VCARD without a BEGIN:VCARD") }
                if let name = done.name ?? done.structured {
                    for number in done.numbers { book.add(number: number, name: name) }
                }
                card = nil
            case "FN": card?.name = unescape(value).trimmingBlanks().nonEmpty
            case "N": card?.structured = structuredName(value)
            case "TEL": card?.numbers.append(telephone(value))
            default: break
            }
        }
        if let open = card { throw ContactFileError(line: open.start, "this card has no END:VCARD") }
    }

    /// Logical lines with the number of their first physical line: a line that starts with a
    /// space or a tab continues the one before (RFC 6350 §3.2), less that one character.
    static func unfold(_ lines: [Substring]) -> [(Int, String)] {
        var out: [(Int, String)] = []
        for (index, line) in lines.enumerated() {
            if let first = line.first, first == " " || first == "\t", !out.isEmpty {
                out[out.count - 1].1 += line.dropFirst()
            } else if !line.isEmpty {
                out.append((index + 1, String(line)))
            }
        }
        return out
    }

    /// `item1.TEL;TYPE="voice,cell":+1 555` → (`TEL`, `+1 555`): the group and parameters
    /// dropped, the name upper-cased; the value starts at the first colon outside quotes.
    static func split(_ line: String) -> (String, Substring)? {
        var quoted = false
        var nameEnd: String.Index?
        for index in line.indices {
            let character = line[index]
            if character == "\"" { quoted.toggle() }
            if !quoted && (character == ";" || character == ":") && nameEnd == nil { nameEnd = index }
            if !quoted && character == ":" {
                var name = line[..<nameEnd!]
                if let dot = name.lastIndex(of: ".") { name = name[name.index(after: dot)...] }
                return (name.uppercased(), line[line.index(after: index)...])
            }
        }
        return nil
    }

    /// A text value's escapes (`\,` `\;` `\\` `\n`) undone.
    static func unescape(_ value: Substring) -> String {
        var out = ""
        var escaped = false
        for character in value {
            if escaped {
                out.append(character == "n" || character == "N" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// `N:Family;Given;Middle;Prefix;Suffix` → `Given Middle Family`, for a card without `FN`.
    static func structuredName(_ value: Substring) -> String? {
        var parts: [String] = [""]
        var escaped = false
        for character in value {
            if escaped { parts[parts.count - 1].append(character); escaped = false }
            else if character == "\\" { escaped = true }
            else if character == ";" { parts.append("") }
            else { parts[parts.count - 1].append(character) }
        }
        let ordered = [parts.count > 1 ? parts[1] : "", parts.count > 2 ? parts[2] : "", parts[0]]
        return ordered.map { $0.replacing(",", with: " ").trimmingBlanks() }.filter { !$0.isEmpty }
            .joined(separator: " ").nonEmpty
    }

    /// A `TEL` value: text, or a `tel:` URI whose parameters (`;ext=`) are dropped.
    static func telephone(_ value: Substring) -> String {
        guard value.lowercased().hasPrefix("tel:") else { return String(value) }
        return String(value.dropFirst(4).prefix { $0 != ";" })
    }
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
