import DBus
import Pipeline

// An event's fields as D-Bus values, one rule for the `Event` signal and the properties: a string
// is `s`, a flag `b`, a count `x`, a duration `d` (seconds), a moment `t` (microseconds since the
// epoch, systemd's convention, whose milliseconds are the JSON line's); a null keeps its key as
// an empty array of its type (`as`, `ad`, `at`), D-Bus having no null. Keys and order are the
// JSON line's, because `EventSchema` writes both.

/// Writes an event straight into an `Event(s event, a{sv} fields)` signal. Every event's first
/// field is its name (`event`), which is also the signal's first argument: the body is begun
/// when that field comes.
struct SignalFields: EventFieldWriter {
    let message: Message
    private(set) var body: NamedVardictBody?

    init(message: Message) {
        self.message = message
    }

    private mutating func begin(_ name: StaticString, _ value: String?) {
        guard body == nil else { return }
        precondition(name.description == "event", "an event's first field is its name, not \(name)")
        body = NamedVardictBody(message, name: value ?? "")
    }

    mutating func add(_ name: StaticString, _ value: String?) {
        begin(name, value)
        if let value { body!.entries.add(name, string: value) } else { body!.entries.addEmptyArray(name, of: "s") }
    }

    mutating func add(_ name: StaticString, _ value: Bool) {
        begin(name, nil)
        body!.entries.add(name, bool: value)
    }

    mutating func add(_ name: StaticString, _ value: Int) {
        begin(name, nil)
        body!.entries.add(name, int64: Int64(value))
    }

    mutating func add(_ name: StaticString, seconds value: Double?) {
        begin(name, nil)
        if let value { body!.entries.add(name, double: value) } else { body!.entries.addEmptyArray(name, of: "d") }
    }

    mutating func add(_ name: StaticString, time value: Double?) {
        begin(name, nil)
        if let value {
            body!.entries.add(name, uint64: JSONObject.microseconds(of: value))
        } else {
            body!.entries.addEmptyArray(name, of: "t")
        }
    }
}

/// Builds the same `a{sv}` as a value, for a property.
struct PropertyFields: EventFieldWriter {
    private(set) var entries: [DBusValue.DictEntry] = []

    var value: DBusValue { .dictionary(keySignature: "s", valueSignature: "v", entries) }

    private mutating func put(_ name: StaticString, _ value: DBusValue) {
        entries.append(.init(.string(name.description), .variant(value)))
    }

    mutating func add(_ name: StaticString, _ value: String?) {
        put(name, value.map(DBusValue.string) ?? .array(elementSignature: "s", []))
    }

    mutating func add(_ name: StaticString, _ value: Bool) { put(name, .bool(value)) }

    mutating func add(_ name: StaticString, _ value: Int) { put(name, .int64(Int64(value))) }

    mutating func add(_ name: StaticString, seconds value: Double?) {
        put(name, value.map(DBusValue.double) ?? .array(elementSignature: "d", []))
    }

    mutating func add(_ name: StaticString, time value: Double?) {
        put(name, value.map { .uint64(JSONObject.microseconds(of: $0)) } ?? .array(elementSignature: "t", []))
    }
}
