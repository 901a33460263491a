import Pipeline

/// One CSV record (RFC 4180): fields quoted when they hold a quote or a comma, quotes doubled,
/// records ended by CRLF. A CSV is read on a terminal (`log --csv | less`) as often as in a
/// spreadsheet, so its text is escaped as all text output is (`TerminalText`: no control,
/// format or line-separator character is written raw, so no cell holds a line break), and text
/// a spreadsheet would run as a formula (it starts, after any blanks, with `=`, `+`, `-`, `@` or
/// their fullwidth forms: a caller id can be anything) gets a leading `'`, which spreadsheets
/// take as "this is text": `+15551230001` is written `'+15551230001`. Values are written as in
/// JSON: times RFC 3339, durations in seconds, flags `true`/`false`, unknown values empty.
struct CSVRecord: EventFieldWriter {
    private(set) var cells: [String] = []
    private(set) var keys: [String] = []

    var line: String { cells.joined(separator: ",") + "\r\n" }
    var headerLine: String { keys.joined(separator: ",") + "\r\n" }

    mutating func add(_ name: StaticString, _ value: String?) { append(name, value.map(CSVRecord.text) ?? "") }
    mutating func add(_ name: StaticString, _ value: Bool) { append(name, value ? "true" : "false") }
    mutating func add(_ name: StaticString, _ value: Int) { append(name, String(value)) }
    mutating func add(_ name: StaticString, count value: Int?) { append(name, value.map { String($0) } ?? "") }

    mutating func add(_ name: StaticString, seconds value: Double?) {
        var object = JSONObject()
        object.add(name, seconds: value)
        append(name, value == nil ? "" : CSVRecord.bareValue(of: object))
    }

    mutating func add(_ name: StaticString, time value: Double?) {
        guard let value else { return append(name, "") }
        var bytes: [UInt8] = []
        JSONObject.appendRFC3339(value, to: &bytes)
        append(name, String(decoding: bytes, as: UTF8.self))
    }

    private mutating func append(_ name: StaticString, _ cell: String) {
        keys.append(name.description)
        cells.append(CSVRecord.quoted(cell))
    }

    /// A text cell as written: escaped, then guarded.
    static func text(_ value: String) -> String { guarded(TerminalText.escape(value)) }

    /// A formula character first (after any blanks): made text.
    static func guarded(_ text: String) -> String {
        guard let first = text.unicodeScalars.first(where: { $0 != " " }), formulaStarts.contains(first) else { return text }
        return "'" + text
    }

    /// What makes a spreadsheet read a cell as a formula: `= + - @`, a tab or a carriage return
    /// (both only ever escaped here), and the fullwidth forms some spreadsheets take for them.
    private static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r", "\u{FF1D}", "\u{FF0B}",
                                                             "\u{FF0D}", "\u{FF20}"]

    static func quoted(_ cell: String) -> String {
        guard cell.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: ",") || $0 == 0x0A || $0 == 0x0D })
        else { return cell }
        var out = "\""
        for character in cell.unicodeScalars {
            if character == "\"" { out += "\"\"" } else { out.unicodeScalars.append(character) }
        }
        return out + "\""
    }

    /// The value of a one-key JSON object (`{"k":1.500}` → `1.500`).
    private static func bareValue(of object: JSONObject) -> String {
        let line = object.line
        guard let colon = line.firstIndex(of: ":") else { return "" }
        return String(line[line.index(after: colon)...].dropLast())
    }
}
