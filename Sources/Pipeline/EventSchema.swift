import BGRunManager
import CallMonitor
import Contacts

/// Where an event's fields are written: a JSON line today; the same keys, in the same order and
/// with the same types, serve every other consumer that needs an event as data.
public protocol EventFieldWriter {
    mutating func add(_ name: StaticString, _ value: String?)
    mutating func add(_ name: StaticString, _ value: Bool)
    mutating func add(_ name: StaticString, _ value: Int)
    /// A count that may be unknown (null).
    mutating func add(_ name: StaticString, count value: Int?)
    /// A duration in seconds, or null.
    mutating func add(_ name: StaticString, seconds value: Double?)
    /// A wall-clock moment, or null.
    mutating func add(_ name: StaticString, time value: Double?)
    /// Fields of `call` that stay the same through most of its events, written by `fields` (`part`
    /// numbers them in the line's order, from 0). A writer may write again what it wrote for the same
    /// fields of the same call (`JSONObject` keeps them per live call); by default `fields` writes them.
    mutating func add(stable part: Int, of call: CallSnapshot, contact: String?, redacted: Bool,
                      _ fields: (inout Self) -> Void)
}

extension EventFieldWriter {
    public mutating func add(stable part: Int, of call: CallSnapshot, contact: String?, redacted: Bool,
                             _ fields: (inout Self) -> Void) {
        fields(&self)
    }

    mutating func add(_ name: StaticString, _ value: FieldValue) {
        switch value {
        case .text(let text): add(name, text)
        case .seconds(let seconds): add(name, seconds: seconds)
        case .time(let time): add(name, time: time)
        case .count(let count): add(name, count)
        case .flag(let flag): add(name, flag)
        }
    }
}

/// The one definition of every event's data: its name and its keys, in order, typed
/// (docs/user-guide.md, "JSON lines", documents them). `write` returns false for events that are not data:
/// the aggregate `busy`/`idle` edges (the run reports those), and notices that are only warnings.
public struct EventSchema {
    /// `--redact-numbers`: caller ids keep only their last two digits.
    public var redactNumbers: Bool

    public init(redactNumbers: Bool = false) {
        self.redactNumbers = redactNumbers
    }

    /// A caller id is hostile input and private data: shown as it came, or redacted.
    public func number(_ raw: String) -> String {
        guard redactNumbers, raw.count > 2, raw != "withheld" else { return raw }
        return String(repeating: "*", count: raw.count - 2) + raw.suffix(2)
    }

    /// The event name of a call event (also its hook's name); nil for the aggregate edges.
    public static func name(of event: TrackerEvent) -> CallHookEvent? {
        switch event {
        case .transition(let call, _): return CallHookEvent(call.state)
        case .updated: return .updated
        case .missed: return .missed
        case .busy, .idle, .announced, .withdrawn: return nil
        }
    }

    /// `contact`: the `contact` key (`--contacts`, looked up once per event: `Delivery`); nil writes null.
    public func write<W: EventFieldWriter>(_ event: TrackerEvent, time: Double, liveCalls: Int, contact: String?,
                                          into writer: inout W) -> Bool {
        write(event, time: time, liveCalls: liveCalls, contactOf: { _ in contact }, into: &writer)
    }

    /// `contactOf`: the contact of the call's number. The event's call is taken out of it once
    /// (a storm writes one line per signal, and each copy of a call retains its every string).
    func write<W: EventFieldWriter>(_ event: TrackerEvent, time: Double, liveCalls: Int,
                                   contactOf: (String) -> String?, into writer: inout W) -> Bool {
        switch event {
        case .transition(let call, let before):
            writeCall(call, as: CallHookEvent(call.state), previous: before?.rawValue, time: time, liveCalls: liveCalls,
                      contact: contactOf(call.number), into: &writer)
        case .updated(let call):
            writeCall(call, as: .updated, previous: call.state.rawValue, time: time, liveCalls: liveCalls,
                      contact: contactOf(call.number), into: &writer)
        case .missed(let call):
            writeCall(call, as: .missed, previous: call.state.rawValue, time: time, liveCalls: liveCalls,
                      contact: contactOf(call.number), into: &writer)
        case .busy, .idle, .announced, .withdrawn:
            return false
        }
        return true
    }

    /// A call event's keys (`name(of:)` names it; `previous` is the state before a transition,
    /// else the call's own).
    private func writeCall<W: EventFieldWriter>(_ call: CallSnapshot, as name: CallHookEvent, previous: String?,
                                               time: Double, liveCalls: Int, contact: String?,
                                               into writer: inout W) {
        writer.add("event", name.rawValue)
        writer.add("time", time: time)
        // What changes from one event of a call to the next (its state, its reason) is written
        // each time; the parts between, a writer may keep (`add(stable:)`).
        let redacted = redactNumbers
        writer.add(stable: 0, of: call, contact: contact, redacted: redacted) { writer in
            writer.add("call_id", call.id)
            writer.add("backend", call.key.backend.rawValue)
            writer.add("modem", call.modem.eventValue)
            writeIdentity(of: call, into: &writer)
            writer.add("path", call.key.path)
        }
        writer.add("state", call.state.rawValue)
        writer.add("previous", previous)
        writer.add("detail", call.detail?.rawValue)
        writer.add(stable: 1, of: call, contact: contact, redacted: redacted) { writer in
            writer.add("direction", call.direction.rawValue)
            writer.add("number", number(call.number))
            writer.add("name", call.name)
            writer.add("contact", contact)
        }
        writer.add("reason", call.reason?.word)
        writer.add(stable: 2, of: call, contact: contact, redacted: redacted) { writer in
            writer.add("multiparty", call.multiparty)
            writer.add("initial", call.initial)
            writer.add("resumed", call.resumed)
            writer.add("missed", call.missed)
            writer.add("first_seen", time: call.firstSeen)
        }
        writer.add(stable: 3, of: call, contact: contact, redacted: redacted) { writer in
            writer.add("connected_at", time: call.connectedAt)
            writer.add("ended_at", time: call.endedAt)
            writer.add("duration", seconds: call.duration)
        }
        writer.add("live_calls", liveCalls)
    }

    /// What the modem is (docs/modem-stacks.md §11): null for what the stack does not say. The
    /// own number is a number like a caller's: redacted alike.
    private func writeIdentity<W: EventFieldWriter>(of call: CallSnapshot, into writer: inout W) {
        let identity = call.modemIdentity
        writer.add("modem_id", identity.equipmentID.isEmpty ? nil : identity.equipmentID)
        writer.add("modem_number", identity.ownNumber.isEmpty ? nil : number(identity.ownNumber))
        writer.add("operator", identity.operatorName.isEmpty ? nil : identity.operatorName)
    }

    public func write<W: EventFieldWriter>(_ event: RunEvent, liveCalls: Int, into writer: inout W) -> Bool {
        writeFields(of: event, liveCalls: liveCalls, into: &writer)
        return true
    }

    public func write<W: EventFieldWriter>(_ event: SleepEvent, liveCalls: Int, into writer: inout W) -> Bool {
        // Ignored and malformed signals are warnings only, as for the call backends.
        switch event.kind {
        case .signalIgnored, .malformedSignal: return false
        default: break
        }
        writeFields(of: event, liveCalls: liveCalls, into: &writer)
        return true
    }

    private func writeFields<E: FieldedEvent, W: EventFieldWriter>(of event: E, liveCalls: Int, into writer: inout W) {
        writer.add("event", event.name)
        writer.add("time", time: event.time)
        for (key, value) in event.fields { writer.add(key, value) }
        writer.add("live_calls", liveCalls)
    }

    public func write<W: EventFieldWriter>(_ notice: BackendNotice, time: Double, into writer: inout W) -> Bool {
        guard let status = notice.status else { return false }
        writer.add("event", "backend")
        writer.add("time", time: time)
        writer.add("backend", notice.backend.rawValue)
        writer.add("status", status.rawValue)
        switch notice {
        case .serviceAppeared(_, let owner): writer.add("owner", owner)
        case .synced(_, let modems, let calls): writer.add("modems", modems); writer.add("calls", calls)
        case .syncRefused(_, let why), .syncFailed(_, let why): writer.add("message", why)
        default: break
        }
        return true
    }

    /// `screened`: the call, the rule that decided, what it did, the hang-up (for a reject) or the
    /// deflection, and a `run` rule's command.
    public func write<W: EventFieldWriter>(_ screened: ScreenedCall, time: Double, liveCalls: Int,
                                          into writer: inout W) {
        writer.add("event", CallHookEvent.screened.rawValue)
        writer.add("time", time: time)
        writer.add("call_id", screened.call.id)
        writer.add("backend", screened.call.key.backend.rawValue)
        writer.add("number", number(screened.call.number))
        writer.add("action", screened.action.rawValue)
        writer.add("decision", screened.decision.action.rawValue)
        writer.add("rule", screened.decision.rule.rawValue)
        writer.add("source", screened.decision.source)
        writer.add("hangup", screened.hangup?.word)
        writer.add("deflect", screened.deflection?.word)
        writer.add("deflect_to", screened.decision.deflectTo.map(number))
        writer.add("command", screened.decision.command?.name)
        writer.add("message", screened.failure)
        writer.add("live_calls", liveCalls)
    }

    /// `tones`: what the far end pressed on a call (docs/modem-stacks.md §14). The tones are
    /// DTMF keys only (`HeardTones`); `dropped` counts what was left out since the call's last
    /// `tones`.
    public func write<W: EventFieldWriter>(_ heard: HeardTones, time: Double, liveCalls: Int, contact: String?,
                                          into writer: inout W) {
        writer.add("event", CallHookEvent.tones.rawValue)
        writer.add("time", time: time)
        writer.add("call_id", heard.call.id)
        writer.add("backend", heard.call.key.backend.rawValue)
        writer.add("modem", heard.call.modem.eventValue)
        writer.add("direction", heard.call.direction.rawValue)
        writer.add("number", number(heard.call.number))
        writer.add("contact", contact)
        writer.add("tones", heard.tones)
        writer.add("dropped", heard.dropped)
        writer.add("live_calls", liveCalls)
    }

    public func writeReady<W: EventFieldWriter>(time: Double, liveCalls: Int, into writer: inout W) {
        writer.add("event", "ready")
        writer.add("time", time: time)
        writer.add("live_calls", liveCalls)
    }

    public func write<W: EventFieldWriter>(_ stats: ServiceStats, liveCalls: Int, into writer: inout W) {
        writer.add("event", stats.occasion.rawValue)
        writer.add("time", time: stats.time)
        writer.add("signals", Int(clamping: stats.signals))
        writer.add("uptime", seconds: stats.uptime)
        writer.add("live_calls", liveCalls)
    }

    /// The live run as the running service tells it (the D-Bus API's `Run`): the run record's
    /// data, with moments rather than durations, so that any reader works out how long at its own
    /// `now`.
    public func write<W: EventFieldWriter>(_ run: RunRecord, into writer: inout W) {
        writer.add("run_id", run.runID)
        writer.add("reason", run.reason)
        writer.add("pid", Int(run.pid))
        writer.add("started_at", time: run.startedAt)
        writer.add("holders", run.holders)
        writer.add("lock", run.lock.rawValue)
        writer.add("lease_expires_at", time: run.leaseExpiresAt)
    }

    /// The last sleep and resume (`status`, `doctor`, the D-Bus API's `LastSleep`).
    public func write<W: EventFieldWriter>(_ sleep: SleepRecord, into writer: inout W) {
        writer.add("slept_at", time: sleep.sleptAt)
        writer.add("resumed_at", time: sleep.resumedAt)
        writer.add("asleep", sleep.isAsleep)
        writer.add("overridden", sleep.lastSleepOverridden)
        writer.add("overrides", sleep.overrides)
        writer.add("last_override_at", time: sleep.lastOverrideAt)
        writer.add("last_override_run", sleep.lastOverrideRun)
        writer.add("last_override_lock", sleep.lastOverrideLock?.rawValue)
    }

    // MARK: acted

    /// `acted`: an act on a call (or a dial), who asked, and what came of it (docs/user-guide.md,
    /// "JSON lines"). The number dialled or deflected to is a number like a caller's: redacted alike.
    public func write<W: EventFieldWriter>(_ acted: ActedCall, time: Double, liveCalls: Int, into writer: inout W) {
        let failure = acted.report.failure
        writer.add("event", EventSchema.actedEvent)
        writer.add("time", time: time)
        writer.add("act", acted.kind.rawValue)
        writer.add("call_id", acted.callID)
        writer.add("backend", acted.call?.key.backend.rawValue)
        writer.add("by", acted.requester.rawValue)
        writer.add("uid", count: acted.uid.map { Int($0) })
        writer.add("number", acted.number.map(number))
        writer.add("modem", acted.modem)
        writer.add("result", acted.result)
        writer.add("error", failure?.stackError)
        writer.add("message", failure?.message)
        writer.add("elapsed", seconds: acted.report.elapsed)
        writer.add("tones_sent", acted.report.tonesSent)
        writer.add("live_calls", liveCalls)
    }

    /// The `acted` event's name (and its hook's).
    public static let actedEvent = CallHookEvent.acted.rawValue
}
