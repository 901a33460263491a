import DBus
import Pipeline

// An event's fields as D-Bus values, one rule for the `Event` signal and the properties: a string
// is `s`, a flag `b`, a count `x`, a duration `d` (seconds), a moment `t` (microseconds since the
// epoch, systemd's convention, whose milliseconds are the JSON line's); a null keeps its key as
// an empty array of its type (`as`, `ax`, `ad`, `at`), D-Bus having no null. Keys and order are the
// JSON line's, because `EventSchema` writes both.

/// Writes an event straight into an `Event(s event, a{sv} fields)` signal, in wire format. Every
/// event's first field is its name (`event`), which is also the signal's first argument: the body
/// is begun when that field comes.
struct SignalFields: EventFieldWriter {
    private(set) var signal: WireSignal?
    private var fields: WireSignal.VardictMark?

    private mutating func begin(_ name: StaticString, _ value: String?) {
        guard signal == nil else { return }
        precondition(name.description == "event", "an event's first field is its name, not \(name)")
        var signal = WireSignal(path: MonitorNames.path, interface: MonitorNames.interface,
                                member: MonitorNames.eventSignal, signature: "sa{sv}")
        signal.string(value ?? "")
        fields = signal.beginVardict()
        self.signal = signal
    }

    /// The finished signal; nil when the event wrote nothing (it is not data) or libdbus refused it.
    mutating func message() -> Message? {
        guard var signal, let fields else { return nil }
        signal.endVardict(fields)
        return signal.message()
    }

    /// A value, or the empty array of its type for null.
    private mutating func put<T>(_ name: StaticString, _ value: T?, null element: Unicode.Scalar,
                                 _ write: (inout WireSignal, T) -> Void) {
        if let value { write(&signal!, value) } else { signal!.entry(name, emptyArrayOf: UInt8(ascii: element)) }
    }

    mutating func add(_ name: StaticString, _ value: String?) {
        begin(name, value)
        put(name, value, null: "s") { $0.entry(name, string: $1) }
    }

    mutating func add(_ name: StaticString, _ value: Bool) {
        begin(name, nil)
        signal!.entry(name, bool: value)
    }

    mutating func add(_ name: StaticString, _ value: Int) {
        begin(name, nil)
        signal!.entry(name, int64: Int64(value))
    }

    mutating func add(_ name: StaticString, count value: Int?) {
        begin(name, nil)
        put(name, value, null: "x") { $0.entry(name, int64: Int64($1)) }
    }

    mutating func add(_ name: StaticString, seconds value: Double?) {
        begin(name, nil)
        put(name, value, null: "d") { $0.entry(name, double: $1) }
    }

    mutating func add(_ name: StaticString, time value: Double?) {
        begin(name, nil)
        put(name, value, null: "t") { $0.entry(name, uint64: JSONObject.microseconds(of: $1)) }
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

    mutating func add(_ name: StaticString, count value: Int?) {
        put(name, value.map { .int64(Int64($0)) } ?? .array(elementSignature: "x", []))
    }

    mutating func add(_ name: StaticString, seconds value: Double?) {
        put(name, value.map(DBusValue.double) ?? .array(elementSignature: "d", []))
    }

    mutating func add(_ name: StaticString, time value: Double?) {
        put(name, value.map { .uint64(JSONObject.microseconds(of: $0)) } ?? .array(elementSignature: "t", []))
    }
}
