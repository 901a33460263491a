import CallMonitor
import Contacts
import Loop

/// Applies the rules to the calls as they come, before the pipeline sees them (so that no sink
/// starts a ring for a call the rules hold back): once per incoming call, when its number is first
/// known. It remembers who called and whom this phone called (the exceptions), and when an
/// emergency number was dialled. It hangs up through `hangUp` and deflects through `deflect` (the
/// backends' non-blocking method calls) and never waits for the answer; a deflection the stack
/// refuses falls back to a hang-up. A `run NAME` rule's command is not its to run: the decision
/// carries it, and the hooks' sink runs it.
public final class CallScreener {
    /// nil: screening is off (no rules, or a rules file that could not be read: fail open).
    public var rules: ScreeningRules?
    /// Emergency numbers the stacks listed, beyond `EmergencyNumbers.common`.
    public private(set) var stackEmergencyNumbers: Set<String> = []
    /// What each modem's stack listed, by "BACKEND MODEM".
    private var listedByStack: [String: [String]] = [:]
    static let listingLimit = 64

    /// The emergency numbers a stack lists for one modem (its whole list, each time it changes):
    /// an outgoing call to any of them, as to a common one, keeps every rule off for an hour.
    public func stackListed(_ numbers: [String], modem: String) {
        guard listedByStack[modem] != nil || listedByStack.count < CallScreener.listingLimit else { return }
        listedByStack[modem] = numbers.isEmpty ? nil : numbers
        stackEmergencyNumbers = Set(listedByStack.values.joined())
    }
    private let contacts: ContactDirectory?
    private let hangUp: (CallKey, @escaping (String?) -> Void) -> Void
    private let deflect: (CallKey, String, @escaping (CallActFailure?) -> Void) -> Void
    /// Runs work after the events of this turn are delivered: a refusal the monitor gives at once
    /// (a number the SIM lists as an emergency one) must follow the decision it refuses.
    private let later: (@escaping () -> Void) -> Void
    private let localTime: (Double) -> LocalTime
    /// Decisions of the calls live now, by call id.
    private var decided: [String: ScreenedCall] = [:]
    /// Calls seen, for the exceptions (`except repeat`, `except called`): one lookup per ring.
    private var recent = RecentCalls(limit: CallScreener.recentLimit)
    private var lastEmergency: Double?
    /// A hang-up or a deflection failed: the call's new decision, to be sent into the pipeline.
    private let onHangupFailed: (ScreenedCall) -> Void
    /// A deflection failed after its call had ended (`failureText` says so): nothing more to send.
    public var onDeflectionLost: (ScreenedCall) -> Void = { _ in }
    static let recentLimit = 4096
    /// The most calls of the history `seed` takes.
    public static let seedLimit = recentLimit / 2

    /// `hangUp(key, done)`: `done(nil)` once the stack hung up, `done(why)` if it did not;
    /// `deflect(key, number, done)`: `done(nil)` once the stack sent the call on, else why not
    /// (`CallMonitor.act`); `onHangupFailed`: the new decision of a call whose hang-up failed (it
    /// rings) or whose deflection failed (it is rejected instead).
    public init(contacts: ContactDirectory?, localTime: @escaping (Double) -> LocalTime,
                onHangupFailed: @escaping (ScreenedCall) -> Void = { _ in },
                deflect: @escaping (CallKey, String, @escaping (CallActFailure?) -> Void) -> Void = { $2(.stackGone) },
                later: @escaping (@escaping () -> Void) -> Void = { $0() },
                hangUp: @escaping (CallKey, @escaping (String?) -> Void) -> Void) {
        self.later = later
        self.contacts = contacts
        self.localTime = localTime
        self.onHangupFailed = onHangupFailed
        self.deflect = deflect
        self.hangUp = hangUp
    }

    /// What the phone does for the call with `id`: nil when no rule has spoken of it.
    public func action(for id: String) -> ScreeningAction? { decided[id]?.action }

    public func decision(for id: String) -> ScreenedCall? { decided[id] }

    /// How long a ModemManager call may ring in without a number before it is a withheld caller
    /// (docs/screening.md, "Withheld callers"): a modem sends `+CLIP` with every `RING`, and
    /// networks repeat `RING` every few seconds, so by then the number would have come.
    public static let withheldAfter: Double = 6
    /// ModemManager's incoming calls ringing without a number, and since when.
    private var numberless: [String: (call: CallSnapshot, since: Double)] = [:]

    /// When the oldest numberless ModemManager call becomes a withheld caller (wall clock); nil
    /// when there is none: the daemon arms a timer for it.
    public var withheldDeadline: Double? {
        numberless.values.map(\.since).min().map { $0 + CallScreener.withheldAfter }
    }

    /// Decides, as withheld callers, the numberless ModemManager calls that have rung in for
    /// `withheldAfter` by `now`; oldest first.
    public func screenNumberless(now: Double) -> [ScreenedCall] {
        let due = numberless.values.filter { now >= $0.since + CallScreener.withheldAfter }.sorted { $0.since < $1.since }
        var made: [ScreenedCall] = []
        for entry in due {
            numberless.removeValue(forKey: entry.call.id)
            if let done = screen(entry.call, now: now, withheld: true) { made.append(done) }
        }
        return made
    }

    /// ModemManager gives a withheld caller no number at all, and an empty number also means "not
    /// known yet" (docs/modem-stacks.md §1.6): such a call is followed until its number comes,
    /// it stops ringing in, or `withheldAfter` has passed.
    private func followNumberless(_ call: CallSnapshot) {
        if call.direction == .incoming, call.state == .incoming, call.number.isEmpty,
           !call.initial, decided[call.id] == nil, !screenedIDs.contains(call.id) {
            if numberless[call.id] == nil, numberless.count < CallScreener.recentLimit {
                numberless[call.id] = (call, call.firstSeen)
            } else if let since = numberless[call.id]?.since {
                numberless[call.id] = (call, since)
            }
        } else if !numberless.isEmpty {
            // Most calls never are: a storm's every event would hash its id for nothing.
            numberless.removeValue(forKey: call.id)
        }
    }

    /// Decides the calls of `events` whose number is now known, at `now`; the decisions are to be
    /// sent after the events themselves.
    public func screen(_ events: [TrackerEvent], now: Double) -> [ScreenedCall] {
        var made: [ScreenedCall] = []
        for event in events {
            switch event {
            case .transition(let call, let previous):
                if previous == nil { remember(call) }
                followNumberless(call)
                if let done = screen(call, now: now) { made.append(done) }
            case .updated(let call):
                if call.direction == .outgoing || !call.number.isEmpty { remember(call) }
                followNumberless(call)
                if let done = screen(call, now: now) { made.append(done) }
            default:
                break
            }
        }
        return made
    }

    /// `events` as the pipeline is to see them: a call the rules rejected, deflected or ignored (and that
    /// stayed so: a reject whose hang-up failed rang) is no missed call, so its end carries no
    /// `missed` and no `missed` event follows it (docs/screening.md). A silenced call is missed.
    public func unmissed(_ events: [TrackerEvent]) -> [TrackerEvent] {
        guard !decided.isEmpty else { return events }
        return events.compactMap { event in
            switch event {
            case .transition(var call, let previous) where call.missed && decided[call.id]?.action.countsAsMissed == false:
                call.missed = false
                return .transition(call, previous: previous)
            case .missed(let call) where decided[call.id]?.action.countsAsMissed == false:
                return nil
            default:
                return event
            }
        }
    }

    /// Forgets the calls that ended in `events`, once every sink has seen them.
    public func delivered(_ events: [TrackerEvent]) {
        for event in events {
            if case .transition(let call, _) = event, call.state == .disconnected { decided.removeValue(forKey: call.id) }
        }
    }

    /// The calls remembered already, by their id's hash: up to `recentLimit` ids kept as strings
    /// were 0.45 MiB of heap, the larger part of what a busy day's screening holds. Two ids
    /// sharing a hash (one chance in 2^64 per pair, and only among telwatch's own random ids)
    /// would leave one call out of the exceptions' memory.
    private var remembered: Set<Int> = []

    private func remember(_ call: CallSnapshot) {
        let id = call.id.hashValue
        guard !call.number.isEmpty, !CallText.isCut(call.number), !call.initial, !remembered.contains(id)
        else { return }
        remembered.insert(id)
        if remembered.count > CallScreener.recentLimit { remembered.removeAll() }
        if call.direction == .outgoing,
           EmergencyNumbers.contains(call.number, extra: stackEmergencyNumbers) {
            lastEmergency = max(lastEmergency ?? call.firstSeen, call.firstSeen)
        }
        recent.add(call.number, direction: call.direction, time: call.firstSeen)
    }

    private var screenedIDs: Set<String> = []

    /// `withheld`: a numberless call decided as a withheld caller. A number cut for its length
    /// (`CallText.isCut`) is no number any rule can judge, nor a withheld one: it rings (fail open).
    private func screen(_ call: CallSnapshot, now: Double, withheld: Bool = false) -> ScreenedCall? {
        // The call's own fields first: the rules are copied only for a ringing call (a storm's
        // events are not).
        guard call.direction == .incoming, call.state == .incoming, !call.number.isEmpty || withheld,
              let rules, !CallText.isCut(call.number), !call.initial, decided[call.id] == nil,
              !screenedIDs.contains(call.id) else { return nil }
        screenedIDs.insert(call.id)
        if screenedIDs.count > CallScreener.recentLimit { screenedIDs = [call.id] }
        if let refused = refusedDeflection(of: call) {
            decided[call.id] = refused
            requestHangUp(call)
            return refused
        }
        var facts = ScreeningFacts(isContact: contacts?.name(for: call.number) != nil, lastEmergency: lastEmergency)
        (facts.lastIncoming, facts.lastOutgoing) = recent.latest(call.number, before: call.firstSeen)
        guard let decision = rules.decide(number: withheld ? "withheld" : call.number, facts: facts, now: now,
                                          local: localTime(now)) else {
            return nil
        }
        let screened = ScreenedCall(call: call, decision: decision, hangup: decision.action == .reject ? .requested : nil,
                                    deflection: decision.action == .deflect ? .requested : nil)
        decided[call.id] = screened
        switch decision.action {
        case .reject: requestHangUp(call)
        case .deflect:
            deflect(call.key, decision.deflectTo ?? "") { [weak self] failure in
                guard let self, let failure else { return }
                self.later { [weak self] in self?.deflectionFailed(call, decision, failure) }
            }
        case .silence, .ignore, .allow: break
        }
        return screened
    }

    /// The stack refused a deflection (a modem without call deflection, a number the SIM lists as
    /// an emergency one): the call is rejected instead, so that it still does not ring.
    private func deflectionFailed(_ call: CallSnapshot, _ decision: ScreeningDecision, _ failure: CallActFailure) {
        var failed = decided[call.id] ?? ScreenedCall(call: call, decision: decision)
        failed.deflection = .failed(CallScreener.words(failure))
        failed.hangup = .requested
        guard decided[call.id] != nil else {
            // ModemManager ends its call object when the modem refuses the deflection, while the
            // modem's call rings on: the modem's next RING is a new call object, rejected as it
            // comes (docs/screening.md, "Deflect").
            if refusedDeflections.count < CallScreener.listingLimit {
                refusedDeflections[CallScreener.caller(call)] = (failed, call.firstSeen + CallScreener.refusedDeflectionWindow)
            }
            failed.hangup = nil
            return onDeflectionLost(failed)
        }
        decided[call.id] = failed
        onHangupFailed(failed)
        requestHangUp(failed.call)
    }

    /// How long after a refused deflection's call was first seen a new call object of the same
    /// caller on the same modem is that call still ringing (a network repeats its RING every few
    /// seconds, and a caller gives up within a minute).
    static let refusedDeflectionWindow: Double = 60
    /// Callers whose deflection the stack refused after it had ended their call object, by
    /// `caller(_:)`: the decision to repeat, as a reject, and until when.
    private var refusedDeflections: [String: (screened: ScreenedCall, until: Double)] = [:]

    private static func caller(_ call: CallSnapshot) -> String {
        call.key.backend.rawValue + " " + call.modem.eventValue + " " + call.number
    }

    /// The call is a refused deflection's caller still ringing: rejected, said as the refusal's.
    private func refusedDeflection(of call: CallSnapshot) -> ScreenedCall? {
        guard !refusedDeflections.isEmpty else { return nil }
        let key = CallScreener.caller(call)
        guard let refused = refusedDeflections.removeValue(forKey: key), call.firstSeen <= refused.until else { return nil }
        var screened = refused.screened
        screened.call = call
        screened.hangup = .requested
        return screened
    }

    private func requestHangUp(_ call: CallSnapshot) {
        let id = call.id
        hangUp(call.key) { [weak self] why in
            guard let self, let why else { return }
            self.later { [weak self] in
                guard let self, var failed = self.decided[id] else { return }
                failed.hangup = .failed(why)
                self.decided[id] = failed
                self.onHangupFailed(failed)
            }
        }
    }

    /// A refused act as a line says it: the stack's own words where it gave some.
    static func words(_ failure: CallActFailure) -> String {
        switch failure {
        case .stackRefused(let name, let message): return message.isEmpty ? name : "\(name): \(message)"
        case .stackTimedOut: return "the stack did not answer in time"
        case .stackGone: return "the stack is gone"
        case .emergencyNumber: return "the number is an emergency number the stack lists"
        case .refusedNumber(let why): return "the number is refused: \(why)"
        case .notRinging(let state): return "the call is no longer ringing (\(state.rawValue))"
        default: return "\(failure)"
        }
    }

    /// The user silences a live call (D-Bus `Silence`, MQTT `silence`; `call` is nil when no live
    /// call has the id asked for): it stops ringing, and an unanswered end is a missed call,
    /// notified quietly, as a `silence` rule's. The decision is final for the call: a number
    /// that comes later is not screened again.
    public func silence(_ call: CallSnapshot?) -> SilenceOutcome {
        guard let call else { return .noSuchCall }
        guard call.direction != .outgoing, call.state == .incoming else { return .notRinging(call.state) }
        if let earlier = decided[call.id], !earlier.action.rings { return .quietAlready(earlier.action) }
        let silenced = ScreenedCall(call: call, decision: ScreeningDecision(action: .silence, rule: .user))
        decided[call.id] = silenced
        screenedIDs.insert(call.id)
        numberless.removeValue(forKey: call.id)
        return .silenced(silenced)
    }

    /// Calls seen before (from the history), oldest first, so the exceptions know them after a restart.
    public func seed(_ calls: [(number: String, direction: CallDirection, time: Double)]) {
        for call in calls.suffix(CallScreener.recentLimit / 2) {
            recent.add(call.number, direction: call.direction, time: call.time)
        }
        for call in calls where call.direction == .outgoing && EmergencyNumbers.contains(call.number) {
            lastEmergency = max(lastEmergency ?? call.time, call.time)
        }
    }

    /// How far back the exceptions look (`except repeat`, `except called`, the emergency hour):
    /// what the history is asked for at the start; nil when no rule looks back.
    public var lookBack: Double? {
        guard let rules else { return nil }
        return max(rules.repeatWindow ?? 0, rules.calledWindow ?? 0, ScreeningRules.emergencyWindow)
    }
}
