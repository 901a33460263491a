import History
import Pipeline

/// `telwatch log` as a table for people: local times, what became of each call, how long it
/// lasted. A number or name goes through `TerminalText`, like every caller id telwatch prints.
struct HistoryFormat {
    var schema = EventSchema()
    /// Now, for how long a live call has lasted so far.
    var now: Double

    static let header = "first seen".padded(to: 21) + "dir".padded(to: 5) + "number".padded(to: 17)
        + "call".padded(to: 11) + "lasted".padded(to: 15) + "id       stack"

    /// `2026-11-29 14:20:45  in   +15551230001     answered   talked 5.5 s   4e630bca modemmanager Modem/0 …`
    func text(_ row: HistoryRow) -> String {
        var line = Timestamp.readable(row.firstSeen).padded(to: 21)
            + HistoryFormat.direction(row.direction).padded(to: 5)
            + TerminalText.field(schema.number(row.number)).padded(to: 16) + " "
            + HistoryFormat.outcome(row).padded(to: 10) + " "
            + lasted(row).padded(to: 14) + " "
            + TerminalText.field(String(row.callID.prefix(8))) + " " + TerminalText.field(row.backend) + " "
            + CallEventFormat.shortModem(TerminalText.escape(row.modem))
        if !row.name.isEmpty { line += " name=" + TerminalText.field(row.name) }
        if let reason = row.reason, !row.isLive { line += " reason=" + TerminalText.field(reason) }
        if row.unseen { line += " unseen" }
        if let screened = row.screened { line += " screened=" + TerminalText.field(screened) }
        if row.multiparty { line += " multiparty" }
        if row.initial { line += " (live at start)" }
        if row.resumed { line += " (learned on resume)" }
        return line
    }

    /// What became of the call, in a word.
    static func outcome(_ row: HistoryRow) -> String {
        if row.isLive { return "live" }
        if row.state == HistoryRow.unknownState { return "unknown" }
        if row.connectedAt != nil { return "answered" }
        if row.missed { return "missed" }
        // Screening ended it, or kept it quiet until the caller gave up (docs/screening.md).
        if row.screened == "reject" { return "rejected" }
        if row.screened == "ignore" { return "ignored" }
        return row.direction == "outgoing" ? "unanswered" : "ended"
    }

    /// `talked 5.5 s` once answered, `after 2.0 s` when not (the event stream's words), `for …`
    /// while live, `-` when its end was not seen.
    func lasted(_ row: HistoryRow) -> String {
        if row.isLive { return "for " + Duration.text(now - (row.connectedAt ?? row.firstSeen)) }
        guard let duration = row.duration else { return "-" }
        return (row.connectedAt != nil ? "talked " : "after ") + Duration.text(duration)
    }

    static func direction(_ direction: String) -> String {
        switch direction {
        case "incoming": return "in"
        case "outgoing": return "out"
        default: return "?"
        }
    }
}

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
