import CSQLite
import Glibc
import Loop
import SQLite
import TestSupport
import XCTest
@testable import History

/// The database itself: its schema and migrations, the queries `telwatch log` makes, readers
/// beside a writer, and marking missed calls seen.
final class HistoryStoreTests: HistoryTestCase {
    private func row(_ id: String, number: String, at time: Double, missed: Bool = false,
                     state: String = "disconnected") -> HistoryRow {
        var row = HistoryRow()
        row.callID = id
        row.backend = "modemmanager"
        row.modem = "/org/freedesktop/ModemManager1/Modem/0"
        row.path = "/org/freedesktop/ModemManager1/Call/1"
        row.state = state
        row.direction = "incoming"
        row.number = number
        row.missed = missed
        row.firstSeen = time
        row.endedAt = state == "disconnected" ? time + 10 : nil
        row.duration = state == "disconnected" ? 10 : nil
        return row
    }

    func testANewFileHasTheCurrentSchemaInWALModeAndOpensAgainUnchanged() throws {
        let store = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        store.close()
        let database = try openDatabase()
        XCTAssertEqual(try database.integer(pragma: "user_version"), HistorySchema.version)
        XCTAssertEqual(try database.text("PRAGMA journal_mode"), "wal")
        database.close()
        let again = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        try again.write([row("a", number: "+1", at: now)])
        again.close()
        XCTAssertEqual(try rows().count, 1)
    }

    /// The daemon writes in every turn that changes a call, and counts the missed calls not seen
    /// after each run: once the first turn has written, nothing is parsed again (SQLite's parser
    /// cost more than the write), synced or not.
    func testATurnsWriteAndTheUnseenCountParseNoSQLAfterTheFirst() throws {
        let store = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        defer { store.close() }
        try store.write([row("a", number: "+1", at: now, state: "incoming")])
        try store.write([row("a", number: "+1", at: now, missed: true)])
        try store.syncWAL()
        XCTAssertEqual(try store.unseenCount(), 1)
        let parsed = store.statementsParsed
        try store.write([row("b", number: "+2", at: now + 1, state: "incoming")])
        try store.write([row("b", number: "+2", at: now + 1, missed: true)])
        try store.syncWAL()
        XCTAssertEqual(try store.unseenCount(), 2)
        XCTAssertEqual(store.statementsParsed, parsed, "statements parsed again")
        XCTAssertEqual(try rows().map(\.callID).sorted(), ["a", "b"])
    }

    func testAnOlderFileIsMigratedOnceAndANewerOneRefused() throws {
        // Version 0: a database no telwatch has set up (an empty file is one too).
        try Files.write(path, "")
        XCTAssertEqual(try XCTUnwrap(HistoryReader(path: path)).calls(HistoryQuery()), [], "nothing to read yet")
        _ = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        XCTAssertEqual(try openDatabase().integer(pragma: "user_version"), 3)

        try openDatabase().execute("PRAGMA user_version = 4")
        XCTAssertThrowsError(try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)) { error in
            XCTAssertEqual(error as? HistoryProblem, .newerSchema(4, known: 3))
        }
        XCTAssertThrowsError(try HistoryReader(path: path)) { error in
            XCTAssertEqual(error as? HistoryProblem, .newerSchema(4, known: 3))
        }
    }

    /// A file an earlier telwatch made (version 1, before call screening): `telwatch log` reads it
    /// as it is, a command marks its calls seen without migrating it, and the daemon upgrades it
    /// in place, every row kept.
    func testAVersion1FileIsReadAsItIsAndUpgradedInPlace() throws {
        let old = try SQLiteDatabase(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        try old.execute(HistorySchema.migrations[0] + "PRAGMA user_version = 1;")
        try old.execute("""
            INSERT INTO calls (call_id, backend, modem, path, state, direction, number, name, reason, multiparty, \
            initial, resumed, missed, first_seen, ended_at, duration) VALUES ('old', 'modemmanager', '/m', '/c', \
            'disconnected', 'incoming', '+15550001', '', 'unknown', 0, 0, 0, 1, \(now - 100), \(now - 90), 10)
            """)
        old.close()
        XCTAssertEqual(try rows().map(\.callID), ["old"])
        XCTAssertNil(try rows().first?.screened)
        XCTAssertEqual(try rows(HistoryQuery(screenedOnly: true)), [], "no call was screened before screening")
        let command = try XCTUnwrap(HistoryStore.openExisting(path: path, busyTimeout: 0.05))
        XCTAssertEqual(try command.listAndMarkSeen(HistoryQuery(missedOnly: true)).marked, 1)
        command.close()
        XCTAssertEqual(try openDatabase().integer(pragma: "user_version"), 1, "a command never migrates")

        let store = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        XCTAssertEqual(try openDatabase().integer(pragma: "user_version"), HistorySchema.version)
        XCTAssertEqual(try openDatabase().text("SELECT count(*) FROM sqlite_master WHERE name = 'calls_live'"), "0",
                       "version 3 writes no index of the live calls")
        var rejected = row("new", number: "+19005550100", at: now)
        rejected.screened = "reject"
        var allowed = row("allowed", number: "+19005550111", at: now - 10, missed: true)
        allowed.screened = "allow"
        var deflected = row("deflected", number: "+18005550100", at: now - 20)
        deflected.screened = "deflect"
        try store.write([rejected, allowed, deflected])
        store.close()
        let all = try rows()
        XCTAssertEqual(all.map(\.callID), ["new", "allowed", "deflected", "old"])
        XCTAssertEqual(all.map(\.screened), ["reject", "allow", "deflect", nil])
        XCTAssertEqual(all.last?.missed, true, "the old row is kept as it was")
        XCTAssertEqual(all.last?.unseen, false)
        XCTAssertEqual(try rows(HistoryQuery(screenedOnly: true)).map(\.callID), ["new", "deflected"],
                       "held back: not allowed")
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    func testQueriesSelectNewestFirstAndTakeNumbersLiterally() throws {
        let store = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        try store.write([
            row("1", number: "+15550001", at: now - 300, missed: true),
            row("2", number: "+1555%_02", at: now - 200),
            row("3", number: "+15550003", at: now - 100, missed: true),
            row("4", number: "+15550004", at: now, state: "connected"),
        ])
        XCTAssertEqual(try rows().map(\.callID), ["4", "3", "2", "1"])
        XCTAssertEqual(try rows(HistoryQuery(missedOnly: true)).map(\.callID), ["3", "1"])
        XCTAssertEqual(try rows(HistoryQuery(since: now - 150)).map(\.callID), ["4", "3"])
        XCTAssertEqual(try rows(HistoryQuery(limit: 2)).map(\.callID), ["4", "3"])
        XCTAssertEqual(try rows(HistoryQuery(number: "0003")).map(\.callID), ["3"])
        XCTAssertEqual(try rows(HistoryQuery(number: "%_")).map(\.callID), ["2"], "no wildcards")
        XCTAssertEqual(try rows(HistoryQuery(number: "%")).map(\.callID), ["2"])
        XCTAssertEqual(try rows(HistoryQuery(missedOnly: true, since: now - 250, number: "555", limit: 5)).map(\.callID), ["3"])
    }

    func testListAndMarkSeenMarksExactlyWhatItListed() throws {
        let store = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        try store.write([
            row("1", number: "+15550001", at: now - 300, missed: true),
            row("2", number: "+15550002", at: now - 200, missed: true),
            row("3", number: "+15550003", at: now - 100),
        ])
        let command = try XCTUnwrap(HistoryStore.openExisting(path: path, busyTimeout: 1))
        let (listed, marked) = try command.listAndMarkSeen(HistoryQuery(limit: 2))
        XCTAssertEqual(listed.map(\.callID), ["3", "2"])
        XCTAssertEqual(listed.map(\.unseen), [false, true], "listed as they were")
        XCTAssertEqual(marked, 1)
        XCTAssertEqual(try rows(HistoryQuery(unseenOnly: true)).map(\.callID), ["1"], "the one not listed stays unseen")
        XCTAssertEqual(try store.unseenCount(), 1)
        XCTAssertEqual(try store.markAllSeen(), 1)
        XCTAssertEqual(try store.unseenCount(), 0)
        // The daemon's next write of a row leaves its seen mark alone.
        try store.write([row("1", number: "+15550001", at: now - 300, missed: true)])
        XCTAssertEqual(try store.unseenCount(), 0)
    }

    /// The file is group-writable: a member may put anything in a row. What no telwatch writes
    /// is read as unknown (a time out of RFC 3339's years, a duration no call lasts, NaN, an
    /// infinity, text where a number belongs), so nothing that prints or adds it can trap.
    func testHostileTimesAndDurationsAreReadAsUnknown() throws {
        let store = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        try store.write([row("a", number: "+15550001", at: now)])
        store.close()
        let database = try openDatabase()
        let hostile = ["1e19", "-1e300", "1e999", "-1e999", "'text'", "x'00ff'", "9e15", "-1"]
        for (n, value) in hostile.enumerated() {
            try database.execute("""
                INSERT INTO calls (call_id, backend, modem, path, state, direction, number, name, multiparty, initial, \
                resumed, missed, first_seen, connected_at, ended_at, duration) VALUES ('h\(n)', 'modemmanager', '', '', \
                'disconnected', 'incoming', '+1555009\(n)', '', 0, 0, 0, 0, \(value), \(value), \(value), \(value))
                """)
        }
        database.close()
        let read = try rows().filter { $0.callID.hasPrefix("h") }
        XCTAssertEqual(read.count, hostile.count)
        for row in read {
            XCTAssertNil(row.connectedAt, "\(row.callID)")
            XCTAssertNil(row.endedAt, "\(row.callID)")
            XCTAssertNil(row.duration, "\(row.callID)")
            XCTAssertTrue(row.firstSeen >= 0 && row.firstSeen < 253_402_300_800, "\(row.callID): \(row.firstSeen)")
        }
        XCTAssertEqual(try rows().first { $0.callID == "a" }?.duration, 10, "a real row is read as it was written")
    }

    func testACommandFindsNoHistoryWithoutCreatingOne() throws {
        XCTAssertNil(try HistoryStore.openExisting(path: path, busyTimeout: 1))
        XCTAssertNil(try HistoryReader(path: path))
        XCTAssertFalse(Files.exists(path))
    }

    func testReadersNeitherWaitForTheWriterNorSeeAHalfWrittenTurn() throws {
        let store = try HistoryStore.openForDaemon(path: path, busyTimeout: 0.05)
        try store.write([row("1", number: "+15550001", at: now)])
        let writer = try openDatabase()
        try writer.execute("BEGIN IMMEDIATE; DELETE FROM calls")
        let start = monotonicNow()
        XCTAssertEqual(try rows().map(\.callID), ["1"], "the committed state")
        XCTAssertLessThan(monotonicNow() - start, 0.5, "a reader does not wait for a writer")
        try writer.execute("COMMIT")
        XCTAssertEqual(try rows(), [])
    }


    func testTheURIPathOfTheImmutableFallbackKeepsEveryName() {
        XCTAssertEqual(HistoryReader.uriPath("/var/lib/tel watch/h?#%.db"), "/var/lib/tel%20watch/h%3F%23%25.db")
    }
}
