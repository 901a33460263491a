import BGRunManager
import CallMonitor
import Pipeline

/// What the retained topics say now, kept up to date from the events. The calls' lines are
/// written by `EventSchema`, as on the event stream.
struct MQTTRetainedState {
    let topics: MQTTTopics
    var schema: EventSchema
    private var calls: [(call: CallSnapshot, line: String)] = []
    private var run: RunInfo?
    var memory = MQTTCallMemory()
    /// The outcomes of this turn, published (not retained) once its events are all in: a call
    /// that screening rejects in the turn it rang is `rejected`, never `rang`.
    private(set) var outcomes: [Outcome] = []
    /// An outcome, its call and the number's contact as its event's delivery looked it up.
    typealias Outcome = (outcome: MQTTCallOutcome, call: CallSnapshot, contact: String?)
    /// Calls screening rejected, deflected or ignored: their end is no missed call.
    private var rejected: Set<String> = []
    /// Missed calls not seen yet, from the call history; nil without one.
    var missedUnseen: Int?
    /// The calls screening rejected, deflected or ignored on one local day (`LocalDay.number`), for Home
    /// Assistant's "calls blocked today"; a reject whose hang-up failed rang, and leaves it.
    private var blocked: (day: Int, calls: Set<String>) = (0, [])
    var blockedToday: Int { blocked.calls.count }
    /// Whether call screening is on: `blocked_today` is published only then.
    var countsBlockedCalls = false
    /// Whether commands are taken (`--mqtt-commands`): `ringing-call` is published only then.
    var takesCommands = false
    /// Whether the last `note` changed a retained topic.
    private(set) var changed = false

    init(topics: MQTTTopics, schema: EventSchema) {
        self.topics = topics
        self.schema = schema
    }

    mutating func note(_ delivery: Delivery) {
        changed = false
        switch delivery.event {
        case .calls(let events, let time):
            for event in events { note(event, time: time, contact: event.call.flatMap { delivery.contact(of: $0.number) }) }
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
            if !screened.action.countsAsMissed {
                if rejected.insert(screened.call.id).inserted { outcomes.append((.rejected, screened.call, delivery.contact(of: screened.call.number))) }
                guard blocked.calls.count < MQTTRetainedState.blockedLimit else { return }
                blocked.calls.insert(screened.call.id)
            } else {
                rejected.remove(screened.call.id)
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

    /// The outcomes of the turn, with the `rang` of a call rejected in it taken out.
    mutating func takeOutcomes() -> [Outcome] {
        let taken = outcomes.filter { $0.outcome != .rang || !rejected.contains($0.call.id) }
        outcomes.removeAll()
        // A call's end comes with its `missed` in one batch: forgotten only after the turn.
        rejected = rejected.filter { id in calls.contains { $0.call.id == id } }
        return taken
    }

    private mutating func note(_ event: TrackerEvent, time: Double, contact: String?) {
        let call: CallSnapshot
        switch event {
        case .transition(let snapshot, let previous):
            call = snapshot
            noteOutcome(of: snapshot, previous: previous, contact: contact)
        case .updated(let snapshot):
            call = snapshot
        case .missed(let snapshot):
            guard !rejected.contains(snapshot.id) else { return }
            memory.missedNumber = snapshot.number
            memory.missedName = MQTTRetainedState.name(of: snapshot, contact: contact)
            outcomes.append((.missed, snapshot, contact))
            changed = true
            return
        default: return
        }
        changed = true
        let index = calls.firstIndex { $0.call.id == call.id }
        guard call.state != .disconnected else {
            if let index { calls.remove(at: index) }
            if memory.ringingID == call.id { memory.ringingID = nil }
            if call.direction != .unknown {
                memory.lastDirection = call.direction
                memory.lastEnded = call.endedAt ?? time
                memory.lastDuration = call.duration
            }
            return
        }
        if call.direction == .incoming, call.state == .incoming {
            memory.callerNumber = call.number
            memory.callerName = MQTTRetainedState.name(of: call, contact: contact)
            memory.ringingID = call.id
        } else if memory.ringingID == call.id {
            memory.ringingID = nil
        }
        var object = JSONObject()
        let live = calls.count + (index == nil ? 1 : 0)
        guard schema.write(event, time: time, liveCalls: live, contact: contact, into: &object) else { return }
        if let index { calls[index] = (call, object.line) } else { calls.append((call, object.line)) }
    }

    /// The user's own name for the caller (`--contacts`, as the event's delivery looked it up)
    /// before the network's.
    private static func name(of call: CallSnapshot, contact: String?) -> String? {
        contact ?? (call.name.isEmpty ? nil : call.name)
    }

    /// Every stack has been read: a call that rang in when telwatch last stopped and is not live
    /// now ended unanswered while no telwatch looked, a missed call. Whether that changed anything.
    mutating func settleStart() -> Bool {
        guard let id = memory.ringingID, !calls.contains(where: { $0.call.id == id }) else { return false }
        memory.ringingID = nil
        memory.missedNumber = memory.callerNumber
        memory.missedName = memory.callerName
        return true
    }

    /// A call found live at start rang before: only what happens to it now is an outcome.
    private mutating func noteOutcome(of call: CallSnapshot, previous: CallState?, contact: String?) {
        switch call.state {
        case .incoming where call.direction == .incoming && previous != .incoming && !call.initial:
            outcomes.append((.rang, call, contact))
        case .connected where call.direction == .incoming && previous == .incoming:
            outcomes.append((.answered, call, contact))
        case .disconnected:
            if call.everConnected { outcomes.append((.ended, call, contact)) }
        default:
            break
        }
    }

    /// One outcome's message: what it is, the call's id, and (unless numbers are redacted) who.
    func outcomeMessage(_ outcome: Outcome) -> [UInt8] {
        let call = outcome.call
        var object = JSONObject()
        object.add("event_type", outcome.outcome.rawValue)
        object.add("call_id", call.id)
        object.add("direction", call.direction.rawValue)
        if !schema.redactNumbers {
            object.add("number", schema.number(call.number))
            object.add("name", outcome.contact ?? (call.name.isEmpty ? nil : call.name))
        }
        if outcome.outcome == .ended { object.add("duration", seconds: call.duration) }
        return object.lineBytes
    }

    /// The calls that ring for the user: incoming or waiting, and not rejected, deflected or ignored by
    /// screening (a silenced call still rings at the far end, and can still be rejected).
    var ringingCalls: [CallSnapshot] {
        calls.map(\.call).filter { $0.state == .incoming && !rejected.contains($0.id) }
    }

    /// `idle`, `ringing`, `dialing` or `connected`: the most urgent of the live calls' states.
    /// A call that screening rejected, deflected or ignored is left out: it never rings for the user, so
    /// Home Assistant's "Ringing" (a TV paused on a ring) must not see it ring either.
    var summary: String {
        let states = Set(calls.filter { !rejected.contains($0.call.id) }.map(\.call.state))
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
            stateObject.add("last_caller", memory.callerNumber.map(schema.number))
            stateObject.add("last_caller_name", memory.callerName)
            stateObject.add("last_missed_caller", memory.missedNumber.map(schema.number))
            stateObject.add("last_missed_caller_name", memory.missedName)
        }
        stateObject.add("last_call_direction", memory.lastDirection?.rawValue)
        stateObject.add("last_call_ended", time: memory.lastEnded)
        stateObject.add("last_call_duration", seconds: memory.lastDuration)
        if let missedUnseen { stateObject.add("missed_unseen", missedUnseen) }
        if countsBlockedCalls { stateObject.add("blocked_today", blockedToday) }
        var messages = [(topics.calls, Array(array.utf8)), (topics.run, runObject.lineBytes),
                        (topics.state, stateObject.lineBytes)]
        if takesCommands { messages.append((topics.ringingCall, Array((ringingCalls.count == 1 ? "online" : "offline").utf8))) }
        return messages
    }
}
