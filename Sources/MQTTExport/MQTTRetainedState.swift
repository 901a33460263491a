import BGRunManager
import CallMonitor
import Pipeline

/// telwatch's topics under one root.
public struct MQTTTopics: Sendable {
    public let root: String
    /// `online` / `offline` (retained; `offline` is also the last will).
    public var status: String { root + "/status" }
    /// The live calls, a JSON array of each call's latest event line (retained).
    public var calls: String { root + "/calls" }
    /// The background run: `{"running": …}` (retained).
    public var run: String { root + "/run" }
    /// A summary for dashboards and Home Assistant: state, ringing, last caller (retained).
    public var state: String { root + "/state" }
    /// Every event, QoS 1, not retained.
    public var events: String { root + "/events" }
    /// Where commands are taken from with `--mqtt-commands` (`silence CALL_ID`).
    public var command: String { root + "/command" }
    public let discoveryPrefix: String

    public init(root: String, discoveryPrefix: String) {
        self.root = root
        self.discoveryPrefix = discoveryPrefix
    }
}

/// What the retained topics say now, kept up to date from the events. The calls' lines are
/// written by `EventSchema`, as on the event stream.
struct MQTTRetainedState {
    let topics: MQTTTopics
    var schema: EventSchema
    private var calls: [(call: CallSnapshot, line: String)] = []
    private var run: RunInfo?
    private var lastCaller: (number: String, name: String?)?
    /// Missed calls not seen yet, from the call history; nil without one.
    var missedUnseen: Int?
    /// The calls screening rejected or ignored on one local day (`LocalDay.number`), for Home
    /// Assistant's "calls blocked today"; a reject whose hang-up failed rang, and leaves it.
    private var blocked: (day: Int, calls: Set<String>) = (0, [])
    var blockedToday: Int { blocked.calls.count }
    /// Whether call screening is on: `blocked_today` is published only then.
    var countsBlockedCalls = false
    /// Whether the last `note` changed a retained topic.
    private(set) var changed = false

    init(topics: MQTTTopics, schema: EventSchema) {
        self.topics = topics
        self.schema = schema
    }

    mutating func note(_ event: PipelineEvent) {
        changed = false
        switch event {
        case .calls(let events, let time):
            for event in events { note(event, time: time) }
        case .run(let run):
            switch run.kind {
            case .started(let info): self.run = info
            case .stopped, .expired: self.run = nil
            default: return
            }
            changed = true
        case .screened(let screened, let time):
            let day = LocalDay.number(of: time)
            if day != blocked.day { blocked = (day, []) }
            let before = blocked.calls.count
            if screened.action == .reject || screened.action == .ignore {
                guard blocked.calls.count < MQTTRetainedState.blockedLimit else { return }
                blocked.calls.insert(screened.call.id)
            } else {
                blocked.calls.remove(screened.call.id)
            }
            changed = blocked.calls.count != before
        default:
            break
        }
    }

    static let blockedLimit = 100_000

    /// A new local day began at `now`: the count starts again. Whether it changed.
    mutating func newDay(at now: Double) -> Bool {
        let day = LocalDay.number(of: now)
        guard day != blocked.day else { return false }
        let had = blocked.calls.count
        blocked = (day, [])
        return had > 0
    }

    private mutating func note(_ event: TrackerEvent, time: Double) {
        let call: CallSnapshot
        switch event {
        case .transition(let snapshot, _), .updated(let snapshot): call = snapshot
        default: return
        }
        changed = true
        let index = calls.firstIndex { $0.call.id == call.id }
        guard call.state != .disconnected else {
            if let index { calls.remove(at: index) }
            return
        }
        if call.direction == .incoming, call.state == .incoming { lastCaller = (call.number, call.name) }
        var object = JSONObject()
        let live = calls.count + (index == nil ? 1 : 0)
        guard schema.write(event, time: time, liveCalls: live, into: &object) else { return }
        if let index { calls[index] = (call, object.line) } else { calls.append((call, object.line)) }
    }

    /// `idle`, `ringing`, `dialing` or `connected`: the most urgent of the live calls' states.
    var summary: String {
        let states = Set(calls.map(\.call.state))
        if states.contains(.incoming) { return "ringing" }
        if states.contains(.connected) { return "connected" }
        if states.contains(.dialing) { return "dialing" }
        return "idle"
    }

    /// Every retained topic with its payload now.
    func retainedMessages() -> [(topic: String, payload: [UInt8])] {
        let array = "[" + calls.map(\.line).joined(separator: ",") + "]"
        var runObject = JSONObject()
        runObject.add("running", run != nil)
        runObject.add("run_id", run?.id)
        runObject.add("reason", run?.reason)
        runObject.add("since", time: run?.startedAt)
        var stateObject = JSONObject()
        stateObject.add("state", summary)
        stateObject.add("ringing", summary == "ringing")
        stateObject.add("live_calls", calls.count)
        // A redacted host does not publish its callers at all: last digits say too much in a home.
        if !schema.redactNumbers {
            stateObject.add("last_caller", lastCaller.map { schema.number($0.number) })
            // The user's own name for the number (`--contacts`) before the network's.
            stateObject.add("last_caller_name", lastCaller.flatMap { schema.contacts?.name(for: $0.number) ?? $0.name })
        }
        if let missedUnseen { stateObject.add("missed_unseen", missedUnseen) }
        if countsBlockedCalls { stateObject.add("blocked_today", blockedToday) }
        return [(topics.calls, Array(array.utf8)), (topics.run, runObject.lineBytes),
                (topics.state, stateObject.lineBytes)]
    }
}
