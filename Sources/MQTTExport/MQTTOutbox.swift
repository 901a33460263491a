import CSQLite
import CallMonitor
import SQLite

/// The events the broker has not acknowledged yet, durable: `mqtt-outbox.db` in the state
/// directory (SQLite, WAL). Every event goes in with its sequence number before it is published
/// and leaves when its PUBACK arrives, so what a broker outage or a telwatch restart interrupted
/// is sent again, in order, with its original number. The next number is kept with the rows.
/// Writes of one loop turn are one transaction, committed by `commit()` before the loop waits.
/// Bounded by count and age: the oldest go first, and the caller is told how many.
final class MQTTOutbox {
    struct Row {
        var seq: Int
        var payload: String
    }

    private let database: SQLiteDatabase
    private let insert: SQLiteStatement
    private let delete: SQLiteStatement
    private let select: SQLiteStatement
    private let saveNext: SQLiteStatement
    /// Prepared once: a transaction per loop turn is the outbox's most frequent statement pair.
    private let beginStatement: SQLiteStatement
    private let commitStatement: SQLiteStatement
    private var inTransaction = false
    private(set) var count: Int
    private(set) var nextSeq: Int
    private var nextSeqSaved: Int
    let limit: Int
    let maxAge: Double

    static let fileName = "mqtt-outbox.db"
    /// 2^53: the numbers a JSON reader reads exactly.
    static let seqLimit = 1 << 53

    /// `directory` nil: in memory (the events survive a broker outage, not a restart).
    init(directory: String?, limit: Int, maxAge: Double) throws {
        let path = directory.map { $0 + "/" + MQTTOutbox.fileName } ?? ":memory:"
        database = try SQLiteDatabase(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        database.setBusyTimeout(0.05)
        // Only this telwatch uses the file (the state directory's instance lock): exclusive
        // locking keeps the WAL index in memory and takes the file lock once, not per transaction.
        _ = try database.text("PRAGMA locking_mode = EXCLUSIVE")
        _ = try database.text("PRAGMA journal_mode = WAL")
        try database.execute("""
            PRAGMA synchronous = NORMAL;
            CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, time REAL NOT NULL, payload TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY CHECK (id = 1), next_seq INTEGER NOT NULL);
            INSERT OR IGNORE INTO counter (id, next_seq) VALUES (1, 1);
            CREATE TABLE IF NOT EXISTS memory (id INTEGER PRIMARY KEY CHECK (id = 1), caller_number TEXT,
                caller_name TEXT, missed_number TEXT, missed_name TEXT, last_direction TEXT, last_ended REAL,
                last_duration REAL, ringing_id TEXT);
            """)
        let counted = try database.prepare("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM outbox")
        _ = try counted.step()
        count = counted.int(0)
        let highest = counted.int(1)
        let saved = try database.prepare("SELECT next_seq FROM counter WHERE id = 1")
        _ = try saved.step()
        // Numbers are counted up from 1, one per event: one past what a JSON reader reads exactly
        // was put there by someone else, and counting on from it would overflow.
        guard highest < MQTTOutbox.seqLimit, saved.int(0) < MQTTOutbox.seqLimit else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "its sequence numbers are past \(MQTTOutbox.seqLimit): not telwatch's")
        }
        nextSeq = max(saved.int(0), highest + 1)
        nextSeqSaved = nextSeq
        insert = try database.prepare("INSERT INTO outbox (seq, time, payload) VALUES (?, ?, ?)", persistent: true)
        delete = try database.prepare("DELETE FROM outbox WHERE seq = ?", persistent: true)
        select = try database.prepare("SELECT seq, payload FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
                                      persistent: true)
        saveNext = try database.prepare("UPDATE counter SET next_seq = ? WHERE id = 1", persistent: true)
        beginStatement = try database.prepare("BEGIN IMMEDIATE", persistent: true)
        commitStatement = try database.prepare("COMMIT", persistent: true)
        self.limit = limit
        self.maxAge = maxAge
    }

    /// What the retained state remembered of past calls when telwatch last ran.
    func memory() throws -> MQTTCallMemory {
        let statement = try database.prepare("""
            SELECT caller_number, caller_name, missed_number, missed_name, last_direction, last_ended, last_duration,
            ringing_id FROM memory WHERE id = 1
            """)
        guard try statement.step() else { return MQTTCallMemory() }
        return MQTTCallMemory(callerNumber: statement.text(0), callerName: statement.text(1),
                              missedNumber: statement.text(2), missedName: statement.text(3),
                              lastDirection: statement.text(4).flatMap(CallDirection.init(rawValue:)),
                              lastEnded: statement.double(5), lastDuration: statement.double(6),
                              ringingID: statement.text(7))
    }

    /// Saved with the turn's transaction.
    func remember(_ memory: MQTTCallMemory) throws {
        try begin()
        let statement = try database.prepare("""
            INSERT OR REPLACE INTO memory (id, caller_number, caller_name, missed_number, missed_name, last_direction,
            last_ended, last_duration, ringing_id) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        statement.bind(1, memory.callerNumber)
        statement.bind(2, memory.callerName)
        statement.bind(3, memory.missedNumber)
        statement.bind(4, memory.missedName)
        statement.bind(5, memory.lastDirection?.rawValue)
        statement.bind(6, memory.lastEnded)
        statement.bind(7, memory.lastDuration)
        statement.bind(8, memory.ringingID)
        try statement.step()
    }

    /// The number the next event gets.
    func takeSeq() -> Int {
        defer { nextSeq += 1 }
        return nextSeq
    }

    func add(seq: Int, time: Double, payload: String) throws {
        try begin()
        insert.bind(1, seq)
        insert.bind(2, time)
        insert.bind(3, payload)
        defer { insert.reset() }
        try insert.step()
        count += 1
    }

    func acknowledge(seq: Int) throws {
        try begin()
        delete.bind(1, seq)
        defer { delete.reset() }
        try delete.step()
        count -= database.changes
    }

    /// Up to `limit` rows after `seq`, oldest first.
    func rows(after seq: Int, limit: Int) throws -> [Row] {
        select.bind(1, seq)
        select.bind(2, limit)
        defer { select.reset() }
        var rows: [Row] = []
        while try select.step() { rows.append(Row(seq: select.int(0), payload: select.text(1) ?? "")) }
        return rows
    }

    /// Drops what is past the bounds, oldest first: the rows older than `maxAge`, then the oldest
    /// past `limit`. Returns the range dropped.
    func enforceBounds(now: Double) throws -> (count: Int, first: Int, last: Int)? {
        let oldest = try database.prepare("SELECT MIN(seq) FROM outbox")
        guard try oldest.step(), !oldest.isNull(0) else { return nil }
        let first = oldest.int(0)
        let cut = try database.prepare("""
            SELECT COALESCE(MAX(seq), 0) FROM (SELECT seq FROM outbox WHERE time < ?1
            UNION ALL SELECT seq FROM (SELECT seq FROM outbox ORDER BY seq LIMIT MAX(0, ?2)))
            """)
        cut.bind(1, now - maxAge)
        cut.bind(2, max(0, count - limit))
        guard try cut.step() else { return nil }
        let last = cut.int(0)
        guard last >= first else { return nil }
        try begin()
        let drop = try database.prepare("DELETE FROM outbox WHERE seq <= ?")
        drop.bind(1, last)
        try drop.step()
        let dropped = database.changes
        count -= dropped
        return dropped > 0 ? (dropped, first, last) : nil
    }

    /// Ends the turn's transaction (with the next number), if one is open.
    func commit() throws {
        guard inTransaction else { return }
        inTransaction = false
        if nextSeq != nextSeqSaved {
            saveNext.bind(1, nextSeq)
            defer { saveNext.reset() }
            do { try saveNext.step() } catch { try? database.execute("ROLLBACK"); throw error }
            nextSeqSaved = nextSeq
        }
        defer { commitStatement.reset() }
        do { try commitStatement.step() } catch { try? database.execute("ROLLBACK"); throw error }
    }

    /// Commits what the last turn wrote, then closes; a commit that fails is thrown after the
    /// close (those events were not kept: the caller says so).
    func close() throws {
        defer { database.close() }
        try commit()
    }

    private func begin() throws {
        guard !inTransaction else { return }
        defer { beginStatement.reset() }
        try beginStatement.step()
        inTransaction = true
    }
}
