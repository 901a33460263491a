import CSQLite
import Glibc

/// A prepared statement. Binding and reading are by position (1-based binds, 0-based columns,
/// as SQLite counts them).
package final class SQLiteStatement {
    private let statement: OpaquePointer
    private unowned let database: SQLiteDatabase

    init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    package func bind(_ index: Int32, _ value: String?) {
        guard let value else { sqlite3_bind_null(statement, index); return }
        // Bytes as they came (a caller id may hold anything UTF-8 can), copied by SQLite.
        var copy = value
        copy.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self),
                                  Int32(bytes.count), csqlite_transient())
        }
    }

    package func bind(_ index: Int32, _ value: Double?) {
        guard let value, value.isFinite else { sqlite3_bind_null(statement, index); return }
        sqlite3_bind_double(statement, index, value)
    }

    package func bind(_ index: Int32, _ value: Int) { sqlite3_bind_int64(statement, index, Int64(value)) }

    package func bind(_ index: Int32, _ value: Bool) { sqlite3_bind_int(statement, index, value ? 1 : 0) }

    /// Steps once; true when a row is there to read.
    @discardableResult
    package func step() throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteDatabase.error(of: database.handle)
        }
    }

    /// Ready to run again, binds cleared.
    package func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    package func text(_ column: Int32) -> String? {
        guard !isNull(column), let bytes = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    package func double(_ column: Int32) -> Double? {
        isNull(column) ? nil : sqlite3_column_double(statement, column)
    }

    /// A number stored as one; nil for NULL, text or a blob (which `double` reads as 0).
    package func number(_ column: Int32) -> Double? {
        let type = sqlite3_column_type(statement, column)
        return type == SQLITE_FLOAT || type == SQLITE_INTEGER ? sqlite3_column_double(statement, column) : nil
    }

    package func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }

    package func bool(_ column: Int32) -> Bool { sqlite3_column_int64(statement, column) != 0 }
}
