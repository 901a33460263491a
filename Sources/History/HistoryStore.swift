import CSQLite
import Glibc
import Loop
import SQLite

/// The history database opened for writing: the daemon's (which creates and migrates it) or a
/// command's (`telwatch log --mark-seen`, which needs it to exist already).
///
/// Durability (docs/ARCHITECTURE.md, "Call history"): WAL with `synchronous=NORMAL`, so a commit
/// is a few writes to the WAL and no fsync. The daemon asks for one sync (`syncWAL`) a few seconds
/// after a run has ended, and checkpoints when it chooses (`walFrames`): SQLite's own automatic
/// checkpoints are off. The WAL is started over right after a checkpoint (`restartWAL`), so no
/// sync stalls the loop while a call is live.
public final class HistoryStore {
    public static let fileName = "history.db"
    /// A checkpointed WAL is cut back to this size.
    static let walSizeLimit = 1 << 20
    static let cacheKiB = 256

    public let path: String
    private let database: SQLiteDatabase
    private var upsert: SQLiteStatement?
    /// The file's schema version: the current one for the daemon's, which migrates it; a
    /// command's may be older (it never migrates).
    private let version: Int
    /// The file `path` named when it was opened: the one this connection writes.
    private let identity: (device: UInt, inode: UInt)?

    /// `history.db` in `directory`.
    public static func path(in directory: String) -> String { directory + "/" + fileName }

    private init(path: String, database: SQLiteDatabase, version: Int = HistorySchema.version) {
        self.path = path
        self.database = database
        self.version = version
        var info = stat()
        identity = stat(path, &info) == 0 ? (UInt(info.st_dev), UInt(info.st_ino)) : nil
    }

    /// What stands at `path` now, for the connection opened there.
    public enum FileCheck: Equatable {
        case intact
        /// Another file, or none: the connection writes a file no one will read.
        case replaced
        /// Overwritten in place with what is not a database.
        case damaged(String)
    }

    /// The group may write the file, and whoever may write the directory may replace it; in WAL
    /// mode SQLite reads neither the file's header nor its name again while its own index says
    /// nothing changed, so a file overwritten or replaced under the daemon would take its calls
    /// without a word. A `stat` and a 16-byte read, before each turn's write.
    public func check() -> FileCheck {
        // What cannot be looked at (no identity, a stat refused) is not taken for a replacement.
        guard let identity else { return .intact }
        var info = stat()
        guard stat(path, &info) == 0 else { return errno == ENOENT ? .replaced : .intact }
        guard UInt(info.st_dev) == identity.device, UInt(info.st_ino) == identity.inode else { return .replaced }
        return database.fileHeaderIsSQLite ? .intact : .damaged("file is not a database")
    }

    /// Moves a damaged database aside, with its WAL and the WAL's index, under one new name
    /// beside it (`history.db.damaged-20261203T101500Z`, `…-wal`): nothing of it is lost, and a
    /// new file can start at `path` (a WAL left there would be replayed into it). Returns the new
    /// name; nil when the file could not be moved.
    static func moveAside(_ path: String, now: Double = wallClockNow()) -> String? {
        var time = time_t(max(0, min(now, 253_402_300_799)))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let stamp = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
        var aside = path + ".damaged-" + stamp
        var copy = 1
        while HistoryReader.exists(aside) || HistoryReader.exists(aside + "-wal") {
            copy += 1
            guard copy < 100 else { return nil }
            aside = path + ".damaged-" + stamp + "-\(copy)"
        }
        guard rename(path, aside) == 0 else { return nil }
        for suffix in ["-wal", "-shm"] where HistoryReader.exists(path + suffix) {
            // An index left behind is rebuilt; a WAL left behind must not stay.
            if rename(path + suffix, aside + suffix) != 0 && suffix == "-wal" { _ = unlink(path + suffix) }
        }
        return aside
    }

    /// The daemon's connection: the file is created if missing (never through a link), put in WAL
    /// mode and brought to the current schema. `busyTimeout` is how long a statement may wait for
    /// another program's lock: the loop waits at most that long.
    public static func openForDaemon(path: String, busyTimeout: Double) throws -> HistoryStore {
        let database = try SQLiteDatabase(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW)
        try check(database)
        database.setBusyTimeout(busyTimeout)
        // Before anything is changed: a newer telwatch's file stays exactly as it is, journal mode included.
        _ = try HistorySchema.checkReadable(database)
        let mode = try database.text("PRAGMA journal_mode = WAL")
        guard mode == "wal" else {
            throw HistoryProblem.unavailable("its journal stays in \(mode ?? "no") mode, not WAL")
        }
        // A turn touches a few pages; SQLite's default cache (2 MiB) would be most of the daemon's
        // own memory after a few thousand calls.
        try database.execute("PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = \(walSizeLimit); "
                             + "PRAGMA cache_size = -\(cacheKiB)")
        database.trackWALFrames()
        try HistorySchema.migrate(database)
        letGroupWrite(path)
        return HistoryStore(path: path, database: database)
    }

    /// A group that may read the history may also mark its calls seen (`telwatch log --mark-seen`),
    /// which writes the database, its WAL and the WAL's index: SQLite makes the last two with the
    /// database's mode, so the database's own decides. Only the daemon's files, and only where
    /// the group may read already (a mode someone narrowed stays narrow).
    static func letGroupWrite(_ path: String) {
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
                  info.st_mode & S_IRGRP != 0, info.st_mode & S_IWGRP == 0 else { continue }
            _ = chmod(file, (info.st_mode & 0o7777) | S_IWGRP)
        }
    }

    /// A command's connection to an existing, current database; nil when there is none yet.
    public static func openExisting(path: String, busyTimeout: Double) throws -> HistoryStore? {
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW)
        } catch let error as SQLiteError where error.primary == SQLITE_CANTOPEN && !HistoryReader.exists(path) {
            return nil
        }
        try check(database)
        database.setBusyTimeout(busyTimeout)
        let version = try HistorySchema.checkReadable(database)
        guard version > 0 else { return nil }
        return HistoryStore(path: path, database: database, version: version)
    }

    /// SQLite opens a file it cannot write read-only without a word: that is a problem here.
    private static func check(_ database: SQLiteDatabase) throws {
        guard database.isReadOnly else { return }
        if let path = database.filePath, HistoryProblem.isOnReadOnlyFileSystem(path) {
            throw HistoryProblem.readOnly("opened read-only: a read-only file system")
        }
        throw HistoryProblem.readOnly("opened read-only: no write permission")
    }

    /// Removes the WAL and its index beside `path`, which belonged to a file no longer there.
    static func removeWAL(of path: String) {
        for suffix in ["-wal", "-shm"] { _ = unlink(path + suffix) }
    }

    /// Closes the connection; the last one out checkpoints and removes the WAL, unless `keepWAL`
    /// (the file is damaged: it and its WAL are moved aside as they are).
    public func close(keepWAL: Bool = false) {
        upsert = nil
        database.close(keepWAL: keepWAL)
    }

    /// Frames in the WAL since it last started over.
    public var walFrames: Int { database.walFrames }

    /// Statements SQLite parsed for this connection (for tests: a turn's write parses none).
    var statementsParsed: Int { database.statementsParsed }

    /// Writes every row in one transaction: all of them, or none. The commit syncs nothing
    /// (`synchronous=NORMAL`): `syncWAL` makes it durable.
    public func write(_ rows: [HistoryRow]) throws {
        guard !rows.isEmpty else { return }
        let statement = try upsert ?? database.prepare(HistorySchema.upsert, persistent: true)
        upsert = statement
        try database.transaction {
            for row in rows {
                statement.reset()
                HistorySchema.bind(row, to: statement)
                try statement.step()
            }
        }
        statement.reset()
    }

    /// Syncs the WAL: every write so far survives a power cut. One `fdatasync` for all the
    /// commits since the last one.
    public func syncWAL() throws {
        try database.syncWAL()
        syncs += 1
    }

    /// WAL syncs asked for since the connection opened (for tests: when the sink syncs).
    private(set) var syncs = 0

    /// Calls left live by a telwatch that stopped before it saw their end become `unknown`;
    /// returns how many.
    public func closeUnfinished() throws -> Int {
        try database.transaction {
            try database.execute("UPDATE calls SET state = '\(HistoryRow.unknownState)' WHERE \(HistorySchema.liveCondition)")
            return database.changes
        }
    }

    /// The rows an earlier telwatch left open: live when it was killed, or closed as `unknown` with
    /// no end as it stopped. Only the newest row of each stack path, first seen since `since`: a
    /// stack's call outlives a telwatch restart but not a reboot, and a path used again later
    /// belongs to the later call.
    public func leftOpen(since: Double) throws -> [HistoryRow] {
        let statement = try database.prepare("""
            SELECT \(HistorySchema.selectColumns(version)) FROM calls \
            WHERE (\(HistorySchema.liveCondition) OR (state = '\(HistoryRow.unknownState)' AND ended_at IS NULL)) \
            AND first_seen >= ?1 \
            AND id = (SELECT max(id) FROM calls AS later WHERE later.backend = calls.backend AND later.path = calls.path) \
            ORDER BY id
            """)
        statement.bind(1, since)
        var rows: [HistoryRow] = []
        while try statement.step() { rows.append(HistorySchema.row(from: statement)) }
        return rows
    }

    /// Closes these calls, which ended while no telwatch looked, as `unknown` where they are still
    /// live; returns how many were. One that rang in and was never answered while telwatch looked
    /// is a missed call (not seen yet), as it would have been had telwatch seen its end.
    public func closeUnfinished(callIDs: [String]) throws -> Int {
        guard !callIDs.isEmpty else { return 0 }
        return try database.transaction {
            let statement = try database.prepare(
                "UPDATE calls SET state = '\(HistoryRow.unknownState)' WHERE call_id = ?1 AND \(HistorySchema.liveCondition)")
            let missed = try database.prepare("""
                UPDATE calls SET missed = 1 WHERE call_id = ?1 AND direction = 'incoming' AND connected_at IS NULL \
                AND missed = 0 AND (state IN ('incoming', '\(HistoryRow.unknownState)')) AND ended_at IS NULL
                """)
            var closed = 0
            for id in callIDs {
                missed.reset()
                missed.bind(1, id)
                try missed.step()
                statement.reset()
                statement.bind(1, id)
                try statement.step()
                closed += database.changes
            }
            return closed
        }
    }

    /// Removes the ended calls first seen before `cutoff`; returns how many.
    public func prune(before cutoff: Double) throws -> Int {
        try database.transaction {
            let statement = try database.prepare(
                "DELETE FROM calls WHERE first_seen < ?1 AND NOT (\(HistorySchema.liveCondition))")
            statement.bind(1, cutoff)
            try statement.step()
            return database.changes
        }
    }

    /// Lists the calls `query` selects and marks the missed ones among them seen, in one
    /// transaction: exactly what was listed is marked, even while the daemon records new calls.
    public func listAndMarkSeen(_ query: HistoryQuery) throws -> (rows: [HistoryRow], marked: Int) {
        try database.transaction {
            let rows = try HistoryReader.rows(query, in: database, version: version)
            let update = try database.prepare("UPDATE calls SET seen = 1 WHERE missed = 1 AND seen = 0 AND id IN ("
                                              + query.selectIDs(version) + ")")
            query.bind(to: update)
            try update.step()
            return (rows, database.changes)
        }
    }

    /// Marks every missed call seen; returns how many were unseen.
    public func markAllSeen() throws -> Int {
        try database.transaction {
            try database.execute("UPDATE calls SET seen = 1 WHERE missed = 1 AND seen = 0")
            return database.changes
        }
    }

    /// Missed calls not marked seen: asked after every run, so only the unseen ones are counted
    /// (through their own index), not the whole history.
    public func unseenCount() throws -> Int {
        let statement = try database.reusable("SELECT count(*) FROM calls WHERE missed = 1 AND seen = 0")
        defer { statement.reset() }
        return try statement.step() ? statement.int(0) : 0
    }

    /// Moves the WAL into the database and syncs both, then starts the WAL over.
    public func checkpoint() throws {
        if try database.checkpoint() { try restartWAL() }
    }

    /// The first commit into a new or fully checkpointed WAL rewrites its header and syncs it:
    /// one page written now, while no call is live, pays that, so that no call's turn does.
    public func restartWAL() throws {
        try database.execute("PRAGMA user_version = \(HistorySchema.version)")
    }
}
