import Glibc
import History
import Pipeline
import TestSupport
import XCTest
@testable import telwatch

/// `telwatch log` as it is printed: the table's columns and words, escaping, and CSV quoting
/// with its guard against spreadsheet formulas.
final class HistoryFormatTests: UTCTestCase {

    private func row(state: String = "disconnected", direction: String = "incoming", number: String = "+15551230001",
                     name: String = "", reason: String? = "terminated", missed: Bool = false, unseen: Bool = false,
                     connected: Bool = true, lasted: Double? = 65) -> HistoryRow {
        var row = HistoryRow()
        row.callID = "8758f479-318c-412c-8eef-94e245ed8d9f"
        row.backend = "modemmanager"
        row.modem = "/org/freedesktop/ModemManager1/Modem/0"
        row.path = "/org/freedesktop/ModemManager1/Call/3"
        row.state = state
        row.direction = direction
        row.number = number
        row.name = name
        row.reason = reason
        row.missed = missed
        row.unseen = unseen
        row.firstSeen = now - 120
        row.connectedAt = connected ? now - 110 : nil
        row.endedAt = lasted.map { _ in now }
        row.duration = lasted
        return row
    }

    private func text(_ row: HistoryRow, redact: Bool = false) -> String {
        HistoryFormat(schema: EventSchema(redactNumbers: redact), now: now).text(row)
    }

    func testEachOutcomeHasItsWordAndHowLongItLasted() {
        XCTAssertEqual(HistoryFormat.header, "first seen           dir  number           call       lasted         id       stack")
        XCTAssertEqual(text(row()), "2026-11-29 14:18:45  in   +15551230001     answered   talked 1 min 05 s 8758f479 "
                       + "modemmanager Modem/0 reason=terminated")
        XCTAssertEqual(text(row(missed: true, unseen: true, connected: false, lasted: 12)),
                       "2026-11-29 14:18:45  in   +15551230001     missed     after 12.0 s   8758f479 modemmanager Modem/0 "
                       + "reason=terminated unseen")
        XCTAssertTrue(text(row(direction: "outgoing", connected: false, lasted: 30))
            .hasPrefix("2026-11-29 14:18:45  out  +15551230001     unanswered after 30.0 s   8758f479"))
        XCTAssertEqual(text(row(state: "connected", reason: "accepted", lasted: nil)),
                       "2026-11-29 14:18:45  in   +15551230001     live       for 1 min 50 s 8758f479 modemmanager Modem/0")
        XCTAssertEqual(text(row(state: "unknown", reason: "accepted", lasted: nil)),
                       "2026-11-29 14:18:45  in   +15551230001     unknown    -              8758f479 modemmanager Modem/0 "
                       + "reason=accepted")
        XCTAssertTrue(text(row(direction: "unknown", connected: false, lasted: 3))
            .hasPrefix("2026-11-29 14:18:45  ?    +15551230001     ended      after 3.0 s    8758f479"))
    }

    /// A call screening held back and nobody answered says what was done to it.
    func testAScreenedCallSaysWhatScreeningDid() {
        for (action, word) in [("reject", "rejected"), ("deflect", "deflected"), ("ignore", "ignored")] {
            var screened = row(reason: "terminated", connected: false, lasted: 1)
            screened.screened = action
            XCTAssertEqual(text(screened), "2026-11-29 14:18:45  in   +15551230001     \(word.padded(to: 10)) after 1.0 s    "
                           + "8758f479 modemmanager Modem/0 reason=terminated screened=\(action)")
        }
    }

    func testAHostileNumberOrNameIsEscapedAndRedactionStillApplies() {
        let line = text(row(number: "+1\u{1B}[2J\n5", name: "Eve \u{202E}x"))
        XCTAssertFalse(line.contains("\u{1B}") || line.contains("\n") || line.contains("\u{202E}"), line)
        XCTAssertTrue(line.contains(#"+1\e[2J\n5"#), line)
        XCTAssertTrue(line.contains(#"name="Eve \u{202e}x""#), line)
        XCTAssertTrue(text(row(), redact: true).contains(" **********01 "))
    }

    /// Any column is anyone's in the group-writable file, the call id too (found by the history-row fuzz target).
    func testAHostileCallIDIsEscapedToo() {
        var hostile = row()
        hostile.callID = "\n\u{1B}[2J"
        let line = text(hostile)
        XCTAssertFalse(line.contains("\n") || line.contains("\u{1B}"), line)
        XCTAssertTrue(line.contains(#" \n\e[2J "#), line)
    }

    func testTheIDColumnIsEscaped() {
        var hostile = row()
        hostile.callID = "\u{1B}]0;pwn\u{7}-rest"
        let line = text(hostile)
        XCTAssertFalse(line.unicodeScalars.contains { TerminalText.isEscaped($0) }, line.debugDescription)
        XCTAssertTrue(line.contains(#" \e]0;pwn\u{7} modemmanager"#), line)
    }

    func testCSVIsSafeOnATerminalAndInASpreadsheet() {
        // A caller id that sets the window title, rings, rubs out and starts a C1 CSI.
        var record = CSVRecord()
        row(number: "\u{1B}]0;owned\u{7}\u{8}\u{9B}2J", name: "Eve\u{202E}\u{61C}\u{FEFF}\u{2028}x").write(into: &record)
        XCTAssertFalse(record.line.dropLast(2).unicodeScalars.contains { TerminalText.isEscaped($0) }, record.line.debugDescription)
        XCTAssertTrue(record.line.contains(#",\e]0;owned\u{7}\u{8}\u{9b}2J,Eve\u{202e}\u{61c}\u{feff}\u{2028}x,"#),
                      record.line)
        XCTAssertEqual(CSVRecord.text("a\\b\nc"), #"a\\b\nc"#, "escaped as the table is: a backslash doubled")
        // A formula behind blanks, or in fullwidth characters, is text too.
        for formula in ["  =1+1", "\u{FF1D}1+1", "\u{FF0B}1", " @x"] {
            XCTAssertEqual(CSVRecord.guarded(formula), "'" + formula, formula.debugDescription)
        }
        XCTAssertEqual(CSVRecord.text("\t=1"), #"\t=1"#, "an escaped tab starts with a backslash: no formula")
    }

    func testCSVQuotesWhatNeedsItAndGuardsFormulas() {
        XCTAssertEqual(CSVRecord.quoted("plain"), "plain")
        XCTAssertEqual(CSVRecord.quoted("a,b"), "\"a,b\"")
        XCTAssertEqual(CSVRecord.quoted("say \"hi\""), "\"say \"\"hi\"\"\"")
        XCTAssertEqual(CSVRecord.quoted("two\r\nlines"), "\"two\r\nlines\"")
        for formula in ["=1+1", "+15551234", "-2", "@SUM(A1)", "\tx", "\rx"] {
            XCTAssertEqual(CSVRecord.guarded(formula), "'" + formula, formula)
        }
        XCTAssertEqual(CSVRecord.guarded("15551234"), "15551234")
        XCTAssertEqual(CSVRecord.guarded(""), "")

        var record = CSVRecord()
        row(number: "=HYPERLINK(\"x\")", name: "a,b").write(into: &record)
        XCTAssertEqual(record.keys, ["call_id", "backend", "modem", "path", "state", "direction", "number", "name", "reason",
                                     "multiparty", "initial", "resumed", "missed", "unseen", "screened", "first_seen",
                                     "connected_at", "ended_at", "duration"])
        XCTAssertEqual(record.line, "8758f479-318c-412c-8eef-94e245ed8d9f,modemmanager,/org/freedesktop/ModemManager1/Modem/0,"
                       + "/org/freedesktop/ModemManager1/Call/3,disconnected,incoming,\"'=HYPERLINK(\"\"x\"\")\",\"a,b\","
                       + "terminated,false,false,false,false,false,,2026-11-29T14:18:45.402Z,2026-11-29T14:18:55.402Z,"
                       + "2026-11-29T14:20:45.402Z,65.000\r\n")
    }

    func testJSONHasTheEventStreamsKeysAndTypes() throws {
        var object = JSONObject()
        row(state: "unknown", reason: nil, lasted: nil).write(into: &object)
        XCTAssertEqual(object.line, "{\"call_id\":\"8758f479-318c-412c-8eef-94e245ed8d9f\",\"backend\":\"modemmanager\","
                       + "\"modem\":\"/org/freedesktop/ModemManager1/Modem/0\",\"path\":\"/org/freedesktop/ModemManager1/Call/3\","
                       + "\"state\":\"unknown\",\"direction\":\"incoming\",\"number\":\"+15551230001\",\"name\":\"\",\"reason\":null,"
                       + "\"multiparty\":false,\"initial\":false,\"resumed\":false,\"missed\":false,\"unseen\":false,\"screened\":null,"
                       + "\"first_seen\":\"2026-11-29T14:18:45.402Z\",\"connected_at\":\"2026-11-29T14:18:55.402Z\","
                       + "\"ended_at\":null,\"duration\":null}")
    }
}
