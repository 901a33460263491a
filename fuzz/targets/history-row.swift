// Fuzz target: a row of the call history as `telwatch log` reads and prints it.
// fuzz-sources: Sources/telwatch/Output/HistoryFormat.swift Sources/telwatch/Output/CSVRecord.swift Sources/telwatch/Output/CallEventFormat.swift Sources/telwatch/Output/Duration.swift Sources/telwatch/Output/Timestamp.swift Sources/telwatch/Output/TerminalText.swift
//
// `history.db` is writable by the telwatch group (`log --mark-seen`), so any member may put any
// value in any column: a real, an integer, text or a blob, of any size, NaN and the infinities
// included. The input is one row: for each of the four time columns a type byte and eight bytes
// (an IEEE double or an integer), then the text columns, split at NUL. The row goes into a real
// database through SQLite's own API and is read back by `HistoryReader`, as `log` reads it, then
// printed as the table, a JSON line and a CSV record. Checked besides "no crash":
// - a time read back is within RFC 3339's years, a duration within `Duration.longest`;
// - the table line is one line (the text escaped); the JSON line is one line, one object.

import CSQLite
import Glibc
import Pipeline
@testable import History

/// One database for the whole run: a row is replaced per input.
private let place: (path: String, writer: OpaquePointer, reader: HistoryReader) = {
    var template = Array("/tmp/telwatch-fuzz-history-XXXXXX".utf8CString)
    let directory = String(cString: mkdtemp(&template))
    let path = HistoryStore.path(in: directory)
    try! HistoryStore.openForDaemon(path: path, busyTimeout: 1).write([HistoryRow()])
    var writer: OpaquePointer?
    precondition(sqlite3_open(path, &writer) == SQLITE_OK)
    sqlite3_exec(writer, "PRAGMA synchronous = OFF", nil, nil, nil)
    return (path, writer!, try! HistoryReader(path: path)!)
}()

private let insert: OpaquePointer = {
    var statement: OpaquePointer?
    let sql = """
        INSERT OR REPLACE INTO calls (id, call_id, backend, modem, path, state, direction, number, name, reason, \
        multiparty, initial, resumed, missed, seen, screened, first_seen, connected_at, ended_at, duration) \
        VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
        """
    precondition(sqlite3_prepare_v2(place.writer, sql, -1, &statement, nil) == SQLITE_OK)
    return statement!
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var cursor = 0
    func take(_ count: Int) -> [UInt8] {
        let piece = Array(bytes[min(cursor, bytes.count)..<min(cursor + count, bytes.count)])
        cursor += count
        return piece + [UInt8](repeating: 0, count: count - piece.count)
    }
    sqlite3_reset(insert)
    sqlite3_clear_bindings(insert)
    // The time columns (first_seen is NOT NULL: a NULL there is refused, like any write of it).
    for column: Int32 in 16...19 {
        let type = take(1)[0]
        let raw = take(8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        switch type % 5 {
        case 0: sqlite3_bind_double(insert, column, Double(bitPattern: raw))
        case 1: sqlite3_bind_int64(insert, column, Int64(bitPattern: raw))
        case 2: sqlite3_bind_text(insert, column, String(raw), -1, csqlite_transient())
        case 3: _ = withUnsafeBytes(of: raw) { sqlite3_bind_blob(insert, column, $0.baseAddress, 8, csqlite_transient()) }
        default: sqlite3_bind_null(insert, column)
        }
    }
    let texts = bytes[min(cursor, bytes.count)...].split(separator: 0, omittingEmptySubsequences: false)
    for column: Int32 in 1...15 {
        let index = Int(column) - 1
        let text = index < texts.count ? Array(texts[index]) : []
        if column >= 10 && column <= 14 {
            sqlite3_bind_int64(insert, column, Int64(text.first ?? 0) - 128)
        } else {
            // Bytes as they came, NUL-ended so that an empty one has an address too.
            _ = (text + [0]).withUnsafeBytes {
                sqlite3_bind_text(insert, column, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(text.count),
                                  csqlite_transient())
            }
        }
    }
    guard sqlite3_step(insert) == SQLITE_DONE else { return 0 }

    let rows = try! place.reader.calls(HistoryQuery())
    precondition(rows.count == 1, "one row written, \(rows.count) read")
    let row = rows[0]
    precondition(row.firstSeen >= 0 && row.firstSeen < 253_402_300_800, "first_seen \(row.firstSeen)")
    for time in [row.connectedAt, row.endedAt].compactMap({ $0 }) {
        precondition(time >= 0 && time < 253_402_300_800, "a time of \(time)")
    }
    if let duration = row.duration { precondition(duration >= 0 && duration <= Duration.longest, "duration \(duration)") }

    let line = HistoryFormat(now: 1_780_000_000).text(row)
    precondition(!line.contains("\n") && !line.contains("\r"), "the table line is one line: \(line)")
    var object = JSONObject()
    row.write(into: &object)
    let json = object.line
    precondition(json.hasPrefix("{") && json.hasSuffix("}") && !json.contains("\n"), "not one JSON line: \(json)")
    var record = CSVRecord()
    row.write(into: &record)
    precondition(record.line.hasSuffix("\r\n") && record.cells.count == record.keys.count, "a CSV record: \(record.line)")
    _ = Duration.text(Double(bitPattern: UInt64(size) &* 0x9E37_79B9_7F4A_7C15))
    return 0
}
