import DBus

/// Fields as the D-Bus API types them (docs/dbus-api.md): `s` text, `b` flag, `x` count, `d`
/// seconds, `t` a moment in microseconds since the epoch; an empty array is null. Read by key,
/// in the order they came.
struct APIFields {
    let entries: [(key: String, value: DBusValue)]

    init(_ entries: [(key: String, value: DBusValue)]) {
        self.entries = entries
    }

    /// An `a{sv}` value (a property, a signal's fields); empty for anything else.
    init(_ value: DBusValue?) {
        guard case .dictionary(_, _, let pairs)? = value?.unwrapped else {
            entries = []
            return
        }
        entries = pairs.compactMap { pair in pair.key.string.map { ($0, pair.value.unwrapped) } }
    }

    var isEmpty: Bool { entries.isEmpty }

    func value(_ key: String) -> DBusValue? { entries.first { $0.key == key }?.value }
    func text(_ key: String) -> String? { value(key)?.string }
    func flag(_ key: String) -> Bool { value(key)?.bool ?? false }
    func count(_ key: String) -> Int { value(key)?.int64.map { Int($0) } ?? 0 }
    func seconds(_ key: String) -> Double? { value(key)?.double }
    func time(_ key: String) -> Double? { value(key)?.uint64.map(APIFields.seconds(microseconds:)) }

    static func seconds(microseconds: UInt64) -> Double { Double(microseconds) / 1_000_000 }
}
