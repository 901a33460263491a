import BGRunManager
import CallMonitor
import Loop

/// Keeps the state directory's `live-calls` record: the calls live at the end of the last turn
/// that changed them, for the next telwatch, killed or not, to go on with under the same ids
/// (`CallMonitor.remembered`, docs/modem-stacks.md §1.8). It writes in the turn's `persist`
/// phase, after the turn's lines, and only in a turn whose calls started, changed state or
/// number, or ended (and once at `ready`, forgetting what the start did not find): one small
/// `pwrite`, never a timer, nothing per signal.
public final class LiveCallRecorder: EventSink, LoopHook {
    private let file: RecordFile
    private weak var loop: EventLoop?
    private let report: (String) -> Void
    /// The live calls, from the tracker.
    private weak var session: SinkSession?
    /// The record as this telwatch last made it, call by call.
    private var record = LiveCallsRecordText()
    /// Whether the file holds `record`'s text; until then (at start, after a failed write) it
    /// holds `left`, when that is known.
    private var inStep = false
    private var left: String?
    private var due = false
    private var failed = false

    /// `left` is the record as this telwatch found it.
    public init(file: RecordFile, left: String, loop: EventLoop, session: SinkSession, report: @escaping (String) -> Void) {
        self.file = file
        self.loop = loop
        self.session = session
        self.report = report
        self.left = left
        loop.addHook(self)
    }

    public func receive(_ delivery: Delivery) {
        switch delivery.event {
        case .calls(let events, _):
            for event in events where !due {
                switch event {
                // A held call resumed, a call ringing out: its state is the same, and so is the record.
                case .transition(let call, let previous) where previous != call.state: due = record.mayHold(call.id)
                case .updated(let call): due = record.mayHold(call.id)
                default: break
                }
            }
        case .ready:
            due = true
        default:
            break
        }
    }

    public var phase: TurnPhase { .persist }

    public func prepare() -> Double? {
        if due { write() }
        return nil
    }

    public func afterWait(now: Double) {}

    /// The calls still live stay recorded: a call outlives its telwatch (the stack keeps it).
    public func finish(then done: @escaping () -> Void) {
        if due { write() }
        loop?.removeHook(self)
        done()
    }

    private func write() {
        due = false
        guard let session, record.update(session.liveCalls) || !inStep else { return }
        let text = record.text
        if !inStep, let left, LiveCallsRecord.same(text, left) {
            inStep = true
            return
        }
        do {
            // The last call ended: an empty record, as the run record is emptied.
            if text.isEmpty { try file.clear() } else { try file.write(text) }
            inStep = true
            left = nil
            if failed { report("live calls: \(file.path) is written again") }
            failed = false
        } catch {
            inStep = false
            left = nil
            if !failed {
                report("live calls: cannot write \(file.path) (\(error)); a call live when telwatch next starts "
                       + "gets a new id")
            }
            failed = true
        }
    }
}

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
