import BGRunManager
import CallMonitor
import Loop

/// The `live-calls` record's text: `key=value` lines (`RecordFields`), each call's keys prefixed
/// with its place (`0.id=…`). Times keep every digit: the next telwatch gives them back as they were.
public enum LiveCallsRecord {
    /// Calls past this many are not recorded (a stack that invents calls fills no disk).
    public static let limit = 64

    public static func encode(_ calls: [CallSnapshot]) -> String {
        guard !calls.isEmpty else { return "" }
        return header + calls.prefix(limit).enumerated().map { encode(RememberedCall($1), at: $0) }.joined()
    }

    static let header = RecordFields.encode([("version", "1")])

    /// One call's lines, its keys prefixed with its place.
    static func encode(_ call: RememberedCall, at place: Int) -> String {
        let prefix = "\(place)."
        var fields: [(key: String, value: String)] = [
            (prefix + "id", call.id), (prefix + "backend", call.key.backend.rawValue),
            (prefix + "path", call.key.path), (prefix + "direction", call.direction.rawValue),
            (prefix + "number", call.number), (prefix + "state", call.state.rawValue),
            (prefix + "first_seen", "\(call.firstSeen)"),
        ]
        if let connectedAt = call.connectedAt { fields.append((prefix + "connected_at", "\(connectedAt)")) }
        return RecordFields.encode(fields)
    }

    /// Whether a record file holding `text` holds `other`: a record blanked in place is an empty one.
    static func same(_ text: String, _ other: String) -> Bool {
        text == other || text.isEmpty && other.utf8.allSatisfy { $0 == UInt8(ascii: "\n") }
    }

    /// The calls of a record; those first seen before `since` (the boot: no call outlives it)
    /// or not whole are left out.
    public static func decode(_ text: String, since: Double) -> [RememberedCall] {
        guard let fields = RecordFields.decode(text), fields["version"] == "1" else { return [] }
        var calls: [RememberedCall] = []
        for place in 0..<limit {
            let prefix = "\(place)."
            guard let id = fields[prefix + "id"] else { break }
            guard CallID.isWellFormed(id),
                  let backend = fields[prefix + "backend"].flatMap(BackendKind.init(rawValue:)),
                  let path = fields[prefix + "path"],
                  let direction = fields[prefix + "direction"].flatMap(CallDirection.init(rawValue:)),
                  let number = fields[prefix + "number"],
                  let state = fields[prefix + "state"].flatMap(CallState.init(rawValue:)),
                  let firstSeen = fields[prefix + "first_seen"].flatMap(Double.init), firstSeen.isFinite, firstSeen >= since
            else { continue }
            let connectedAt = fields[prefix + "connected_at"].flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
            calls.append(RememberedCall(id: id, key: CallKey(backend: backend, path: path), direction: direction,
                                        number: number, state: state, firstSeen: firstSeen, connectedAt: connectedAt))
        }
        return calls
    }
}
