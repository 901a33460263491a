import CSQLite
import Glibc
import SQLite

/// The history database opened read-only, for `telwatch log` and `telwatch doctor`: it works
/// while the daemon writes (WAL readers never block the writer, nor it them), and as a user who
/// may only read the state directory.
public final class HistoryReader {
    public let path: String
    private let database: SQLiteDatabase
    /// The file's schema version; 0 for a file no telwatch has set up yet: it holds no calls.
    private let version: Int
    private var hasCalls: Bool { version > 0 }

    /// Opens `path` for reading; nil when there is no such file.
    public init?(path: String, busyTimeout: Double = 2) throws {
        guard HistoryReader.exists(path) else { return nil }
        self.path = path
        (database, version) = try HistoryReader.openChecked(path, busyTimeout: busyTimeout)
    }

    private static func openChecked(_ path: String, busyTimeout: Double) throws -> (SQLiteDatabase, Int) {
        do {
            let database = try open(path, busyTimeout: busyTimeout, immutable: false)
            return (database, try HistorySchema.checkReadable(database))
        } catch let error as SQLiteError where needsImmutable(error, path: path) {
            let database = try open(path, busyTimeout: busyTimeout, immutable: true)
            return (database, try HistorySchema.checkReadable(database))
        }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private static func open(_ path: String, busyTimeout: Double, immutable: Bool) throws -> SQLiteDatabase {
        let name = immutable ? "file:" + uriPath(path) + "?immutable=1" : path
        let database = try SQLiteDatabase(path: name, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW)
        database.setBusyTimeout(busyTimeout)
        return database
    }

    /// A reader that may not create the WAL's index (`-shm`) beside a database no daemon has open
    /// cannot read it in WAL mode. With no WAL file there is nothing the database itself lacks,
    /// so it is read as an unchanging file.
    private static func needsImmutable(_ error: SQLiteError, path: String) -> Bool {
        (error.primary == SQLITE_READONLY || error.primary == SQLITE_CANTOPEN) && !exists(path + "-wal")
    }

    /// `path` as the path of a `file:` URI: `%`, `?` and `#` (and anything not plain) escaped.
    static func uriPath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            let plain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".")
            if plain {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        return out
    }

    /// The calls `query` selects, newest first.
    public func calls(_ query: HistoryQuery) throws -> [HistoryRow] {
        guard hasCalls else { return [] }
        return try database.readTransaction { try HistoryReader.rows(query, in: database, version: version) }
    }

    /// How many calls, how many missed and unseen, and the first one's time.
    public func summary() throws -> HistorySummary {
        guard hasCalls else { return HistorySummary(calls: 0, unseen: 0, oldest: nil) }
        return try HistoryReader.summary(of: database)
    }

    /// `PRAGMA quick_check`: "ok", or the first thing wrong in one line, with how many more
    /// there are (SQLite answers a line per damaged page, some of them headings).
    public func quickCheck() throws -> String {
        let statement = try database.prepare("PRAGMA quick_check(\(HistoryReader.problemsCounted))")
        var problems: [Substring] = []
        while try statement.step() {
            let text = statement.text(0) ?? ""
            problems += text.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("*** in database") }
        }
        guard let first = problems.first else { return "no answer" }
        if problems == ["ok"] { return "ok" }
        let more = problems.count - 1
        return first + (more == 0 ? "" : " (and \(more)\(problems.count >= HistoryReader.problemsCounted ? " or more" : "") "
                         + "more problem\(more == 1 ? "" : "s"))")
    }

    static let problemsCounted = 100

    static func rows(_ query: HistoryQuery, in database: SQLiteDatabase, version: Int) throws -> [HistoryRow] {
        let statement = try database.prepare(query.selectRows(version))
        query.bind(to: statement)
        var rows: [HistoryRow] = []
        while try statement.step() { rows.append(HistorySchema.row(from: statement)) }
        return rows
    }

    static func summary(of database: SQLiteDatabase) throws -> HistorySummary {
        let statement = try database.prepare(
            "SELECT (SELECT count(*) FROM calls), (SELECT count(*) FROM calls WHERE missed = 1 AND seen = 0), "
                + "(SELECT min(first_seen) FROM calls)")
        try statement.step()
        return HistorySummary(calls: statement.int(0), unseen: statement.int(1), oldest: statement.double(2))
    }
}

extension SQLiteDatabase {
    /// Runs `body` in one read transaction, so the rows it reads are of one moment.
    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        defer { try? execute("COMMIT") }
        return try body()
    }
}
