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
