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
        if row.screened == "deflect" { return "deflected" }
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
