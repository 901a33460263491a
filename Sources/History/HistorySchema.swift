/// The database's layout, versioned with SQLite's `user_version`: version N is what the first N
/// migrations make. A file of a newer version belongs to a newer telwatch and is never touched;
/// an older one is brought up to date in one transaction when the daemon opens it.
import SQLite

enum HistorySchema {
    static let migrations: [String] = [
        // 1: one row per call; columns named as the event stream's keys.
        """
        CREATE TABLE calls (
            id INTEGER PRIMARY KEY,
            call_id TEXT NOT NULL UNIQUE,
            backend TEXT NOT NULL,
            modem TEXT NOT NULL,
            path TEXT NOT NULL,
            state TEXT NOT NULL,
            direction TEXT NOT NULL,
            number TEXT NOT NULL,
            name TEXT NOT NULL,
            reason TEXT,
            multiparty INTEGER NOT NULL,
            initial INTEGER NOT NULL,
            resumed INTEGER NOT NULL,
            missed INTEGER NOT NULL,
            seen INTEGER NOT NULL DEFAULT 0,
            first_seen REAL NOT NULL,
            connected_at REAL,
            ended_at REAL,
            duration REAL
        );
        CREATE INDEX calls_by_time ON calls (first_seen);
        CREATE INDEX calls_unseen ON calls (first_seen) WHERE missed = 1 AND seen = 0;
        CREATE INDEX calls_live ON calls (state) WHERE state IN ('incoming', 'dialing', 'connected');
        """,
        // 2: what call screening did (docs/screening.md): `reject`, `ignore`, `silence`, `allow`;
        // NULL where no rule spoke, as for every call recorded before.
        """
        ALTER TABLE calls ADD COLUMN screened TEXT;
        """,
        // 3: no index of the live calls. Its condition (`state IN (3 values)`) made SQLite build
        // and drop a temporary table at each write of a call (half of a call's instructions in
        // SQLite, and a WAL page at its ring and at its end); what read it (the live calls closed
        // at a stop) runs once per start or stop, and scans the table.
        """
        DROP INDEX IF EXISTS calls_live;
        """,
    ]

    static var version: Int { migrations.count }

    /// The states of a row whose call was live when last written.
    static let liveCondition = "state IN ('incoming', 'dialing', 'connected')"

    /// Brings the file to `version`. The version is read again inside the write transaction: two
    /// processes opening a new file at once migrate it once.
    static func migrate(_ database: SQLiteDatabase) throws {
        let found = try database.integer(pragma: "user_version")
        if found > version { throw HistoryProblem.newerSchema(found, known: version) }
        guard found < version else { return }
        try database.transaction {
            let current = try database.integer(pragma: "user_version")
            if current > version { throw HistoryProblem.newerSchema(current, known: version) }
            for step in migrations[current...] { try database.execute(step) }
            try database.execute("PRAGMA user_version = \(version)")
        }
    }

    /// The version of a file this telwatch can read (0: no telwatch has set it up, it holds no calls).
    static func checkReadable(_ database: SQLiteDatabase) throws -> Int {
        let found = try database.integer(pragma: "user_version")
        if found > version { throw HistoryProblem.newerSchema(found, known: version) }
        return found
    }

    /// The columns a `HistoryRow` is read from, in `row(from:)`'s order, in a file of version
    /// `found`: an older file that the daemon has not migrated yet is read as it is (a command
    /// never migrates), its missing columns as NULL.
    static func selectColumns(_ found: Int = version) -> String {
        """
        call_id, backend, modem, path, state, direction, number, name, reason, multiparty, initial, resumed, \
        missed, seen, first_seen, connected_at, ended_at, duration, \(found >= 2 ? "screened" : "NULL")
        """
    }

    static func row(from statement: SQLiteStatement) -> HistoryRow {
        var row = HistoryRow()
        row.callID = statement.text(0) ?? ""
        row.backend = statement.text(1) ?? ""
        row.modem = statement.text(2) ?? ""
        row.path = statement.text(3) ?? ""
        row.state = statement.text(4) ?? ""
        row.direction = statement.text(5) ?? ""
        row.number = statement.text(6) ?? ""
        row.name = statement.text(7) ?? ""
        row.reason = statement.text(8)
        row.multiparty = statement.bool(9)
        row.initial = statement.bool(10)
        row.resumed = statement.bool(11)
        row.missed = statement.bool(12)
        row.unseen = row.missed && !statement.bool(13)
        // A first sight no telwatch could have written reads as the epoch: the row stays listed.
        row.firstSeen = StoredValue.time(statement.number(14)) ?? 0
        row.connectedAt = StoredValue.time(statement.number(15))
        row.endedAt = StoredValue.time(statement.number(16))
        row.duration = StoredValue.duration(statement.number(17))
        row.screened = statement.text(18)
        return row
    }

    /// A call's row, new or brought up to date; whether it was seen is the user's, never overwritten.
    static let upsert = """
        INSERT INTO calls (call_id, backend, modem, path, state, direction, number, name, reason, multiparty, \
        initial, resumed, missed, first_seen, connected_at, ended_at, duration, screened) \
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) \
        ON CONFLICT (call_id) DO UPDATE SET modem = excluded.modem, path = excluded.path, state = excluded.state, \
        direction = excluded.direction, number = excluded.number, name = excluded.name, reason = excluded.reason, \
        multiparty = excluded.multiparty, initial = excluded.initial, resumed = excluded.resumed, \
        missed = excluded.missed, connected_at = excluded.connected_at, ended_at = excluded.ended_at, \
        duration = excluded.duration, screened = coalesce(excluded.screened, calls.screened)
        """

    static func bind(_ row: HistoryRow, to statement: SQLiteStatement) {
        statement.bind(1, row.callID)
        statement.bind(2, row.backend)
        statement.bind(3, row.modem)
        statement.bind(4, row.path)
        statement.bind(5, row.state)
        statement.bind(6, row.direction)
        statement.bind(7, row.number)
        statement.bind(8, row.name)
        statement.bind(9, row.reason)
        statement.bind(10, row.multiparty)
        statement.bind(11, row.initial)
        statement.bind(12, row.resumed)
        statement.bind(13, row.missed)
        statement.bind(14, row.firstSeen)
        statement.bind(15, row.connectedAt)
        statement.bind(16, row.endedAt)
        statement.bind(17, row.duration)
        statement.bind(18, row.screened)
    }
}
