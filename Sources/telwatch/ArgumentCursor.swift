import Glibc

/// Walks argv the way GNU tools do: `--name value`, `--name=value`, and `--` ending the options.
struct ArgumentCursor {
    private var items: [String]
    private var pendingValue: String?

    init(_ arguments: [String]) { items = arguments }

    var isEmpty: Bool { items.isEmpty && pendingValue == nil }

    /// The next option or operand; an inline `=value` is kept for `value(for:)`.
    mutating func next() -> String? {
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        if item.hasPrefix("--"), let equals = item.firstIndex(of: "=") {
            pendingValue = String(item[item.index(after: equals)...])
            return String(item[..<equals])
        }
        pendingValue = nil
        return item
    }

    mutating func value(for option: String) throws -> String {
        if let pendingValue {
            self.pendingValue = nil
            return pendingValue
        }
        guard !items.isEmpty else { throw UsageError("\(option) needs a value") }
        return items.removeFirst()
    }

    /// A flag given as `--flag=value` is a mistake for flags that take none.
    mutating func noValue(for option: String) throws {
        if pendingValue != nil { throw UsageError("\(option) takes no value") }
    }

    mutating func rest() -> [String] {
        defer { items.removeAll() }
        return items
    }
}
