import CSQLite
import Glibc

/// One connection to one database file, used from one thread (the loop's, or a one-shot command's).
/// `package`: the MQTT outbox keeps its own small database with it.
package final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?
    /// Frames in the WAL after the last commit, once `trackWALFrames()` was called.
    package private(set) var walFrames = 0
    /// Statements the daemon runs in every turn that writes (`BEGIN`, `COMMIT`, the sync's
    /// pragmas, the unseen count), parsed once: SQLite's parser cost more than the writes.
    private var reused: [String: SQLiteStatement] = [:]
    /// Statements parsed since the connection opened (`prepare` and `execute`), for tests.
    package private(set) var statementsParsed = 0

    /// `flags` are `SQLITE_OPEN_*`; a `file:` URI is accepted (`SQLITE_OPEN_URI` is added).
    package init(path: String, flags: Int32) throws {
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let error = opened.map(SQLiteDatabase.error(of:)) ?? SQLiteError(code: code, message: String(cString: sqlite3_errstr(code)))
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        // Extended codes tell a read-only file from a read-only directory, a full disk from a quota.
        sqlite3_extended_result_codes(opened, 1)
        _ = csqlite_set_defensive(opened)
    }

    deinit { close() }

    /// Closes the connection (the last one out checkpoints the WAL and removes it, unless
    /// `keepWAL`: a damaged file's WAL is kept as it is); safe twice.
    package func close(keepWAL: Bool = false) {
        guard let handle else { return }
        // Finalized before the close: an open statement would keep the connection (and the WAL) alive.
        reused.removeAll()
        if keepWAL { _ = csqlite_no_checkpoint_on_close(handle) }
        sqlite3_wal_hook(handle, nil, nil)
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Keeps `walFrames` up to date. It replaces SQLite's automatic checkpoints, which use the
    /// same hook: the owner checkpoints when it chooses.
    package func trackWALFrames() {
        sqlite3_wal_hook(handle, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<SQLiteDatabase>.fromOpaque(context).takeUnretainedValue().walFrames = Int(frames)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// How long a statement waits for another connection's lock before it fails with `SQLITE_BUSY`.
    package func setBusyTimeout(_ seconds: Double) {
        sqlite3_busy_timeout(handle, Int32(max(0, min(seconds, 60)) * 1000))
    }

    /// The main file's path, as SQLite opened it.
    package var filePath: String? { sqlite3_db_filename(handle, "main").map { String(cString: $0) } }

    /// Whether SQLite could open the file only for reading (it falls back silently).
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Whether the main file starts as a SQLite database does, as it is on disk now (SQLite in
    /// WAL mode does not read it again while its own index says nothing changed). A file shorter
    /// than the header is SQLite's to judge.
    package var fileHeaderIsSQLite: Bool {
        let magic = Array("SQLite format 3\0".utf8)
        var header = [UInt8](repeating: 0, count: magic.count)
        let code = header.withUnsafeMutableBytes { csqlite_read_main_file(handle, $0.baseAddress, Int32($0.count)) }
        return code != SQLITE_OK || header == magic
    }

    /// Syncs the WAL (WAL mode): what was committed with `synchronous=NORMAL` since the last sync
    /// survives a power cut from now on. One `fdatasync`, whatever the commits since.
    package func syncWAL() throws {
        let code = csqlite_sync_wal(handle)
        guard code == SQLITE_OK else {
            // Called past SQLite's API, the sync leaves the connection's own errno as it was.
            throw SQLiteError(code: code, systemErrno: errno, message: "syncing the WAL: " + String(cString: sqlite3_errstr(code)))
        }
    }

    /// Rows changed by the last statement.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs statements that return no rows worth reading.
    package func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        statementsParsed += 1
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: sqlite3_extended_errcode(handle), systemErrno: sqlite3_system_errno(handle),
                              message: message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code)))
        }
    }

    /// `persistent`: kept for the life of the connection (SQLite then allocates it apart).
    package func prepare(_ sql: String, persistent: Bool = false) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        statementsParsed += 1
        guard sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteDatabase.error(of: handle)
        }
        return SQLiteStatement(statement, database: self)
    }

    /// `sql`'s statement, prepared the first time and kept for the life of the connection.
    package func reusable(_ sql: String) throws -> SQLiteStatement {
        if let statement = reused[sql] { return statement }
        let statement = try prepare(sql, persistent: true)
        reused[sql] = statement
        return statement
    }

    /// Runs one statement that returns no rows, prepared once (`reusable`).
    package func run(_ sql: String) throws {
        let statement = try reusable(sql)
        defer { statement.reset() }
        try statement.step()
    }

    /// The integer a pragma such as `user_version` returns.
    package func integer(pragma: String) throws -> Int {
        let statement = try prepare("PRAGMA " + pragma)
        guard try statement.step() else { return 0 }
        return statement.int(0)
    }

    /// The first text a statement returns (`PRAGMA journal_mode = WAL` answers the mode it got).
    package func text(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    /// `IMMEDIATE` takes the write lock first, so a busy database fails before any work is done.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // A failed COMMIT (a full disk) may leave the transaction open: never leave it so.
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Copies what the WAL holds into the database without waiting for anyone (`PASSIVE`);
    /// returns whether all of it was copied.
    package func checkpoint() throws -> Bool {
        var frames: Int32 = 0
        var copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied)
        guard code == SQLITE_OK else { throw SQLiteDatabase.error(of: handle) }
        return frames == copied
    }

    static func error(of handle: OpaquePointer?) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), systemErrno: sqlite3_system_errno(handle),
                    message: String(cString: sqlite3_errmsg(handle)))
    }
}
