
/// A failed SQLite call: its extended result code, the errno behind it when there was one, and
/// SQLite's own message.
public struct SQLiteError: Error, Equatable, CustomStringConvertible {
    public let code: Int32
    public let systemErrno: Int32
    public let message: String

    public init(code: Int32, systemErrno: Int32 = 0, message: String) {
        self.code = code
        self.systemErrno = systemErrno
        self.message = message
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_READONLY`…), without the extension.
    public var primary: Int32 { code & 0xFF }

    public var description: String { message }
}
