/// Which calls `telwatch log` lists (and `--mark-seen` marks): newest first.
import SQLite

public struct HistoryQuery: Equatable, Sendable {
    public var missedOnly = false
    /// Calls a screening rule held back: rejected, ignored or silenced (docs/screening.md).
    public var screenedOnly = false
    /// Missed calls not marked seen (implies `missedOnly`).
    public var unseenOnly = false
    /// Calls first seen at or after this moment (wall clock).
    public var since: Double?
    /// Calls whose number contains this text, compared byte for byte (no pattern characters).
    public var number: String?
    public var limit: Int?

    public init(missedOnly: Bool = false, unseenOnly: Bool = false, screenedOnly: Bool = false, since: Double? = nil,
                number: String? = nil, limit: Int? = nil) {
        self.missedOnly = missedOnly
        self.screenedOnly = screenedOnly
        self.unseenOnly = unseenOnly
        self.since = since
        self.number = number
        self.limit = limit
    }

    /// `SELECT id …` of the matching rows in a file of schema `version`, newest first; `bind`
    /// fills in its parameters.
    func selectIDs(_ version: Int) -> String { "SELECT id FROM calls" + filter(version) + order }

    func selectRows(_ version: Int) -> String {
        "SELECT " + HistorySchema.selectColumns(version) + " FROM calls" + filter(version) + order
    }

    private func filter(_ version: Int) -> String {
        var conditions: [String] = []
        if missedOnly || unseenOnly { conditions.append("missed = 1") }
        // A file from before screening holds no screened call.
        if screenedOnly { conditions.append(version >= 2 ? "screened IN ('reject', 'deflect', 'ignore', 'silence')" : "0") }
        if unseenOnly { conditions.append("seen = 0") }
        if since != nil { conditions.append("first_seen >= ?1") }
        // instr, not LIKE: a caller id's `%` and `_` are not wildcards.
        if number != nil { conditions.append("instr(number, ?2) > 0") }
        return conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
    }

    private var order: String {
        " ORDER BY first_seen DESC, id DESC" + (limit != nil ? " LIMIT ?3" : "")
    }

    func bind(to statement: SQLiteStatement) {
        if let since { statement.bind(1, since) }
        if let number { statement.bind(2, number) }
        if let limit { statement.bind(3, limit) }
    }
}
