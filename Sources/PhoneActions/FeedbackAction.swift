import CallMonitor
import DBus
import Pipeline

/// `--feedback`: rings through feedbackd (`org.sigxcpu.Feedback`, docs/phone-actions.md) while a
/// call rings, and ends that feedback the moment no call rings any more (answered, hung up,
/// missed); a missed call gets its own short feedback once.
///
/// One ring at a time: what should sound is worked out from the live calls (`wanted`), and the
/// feedback sounding is changed only when that changes. One trigger is out at a time (a storm of
/// calls ringing and ending cannot pile up calls to feedbackd): what changed while it was out is
/// put right when it is answered. feedbackd ends a client's feedbacks when the client leaves the
/// bus, so a telwatch that dies mid-ring leaves nothing ringing.
final class FeedbackAction {
    /// The ring feedbackd plays for telwatch, if any.
    private enum Ring {
        /// Triggered; feedbackd has not answered with its id yet. `request` tells this trigger's
        /// answer from that of one sent to an owner that has gone since.
        case requested(FeedbackEvent, request: UInt64)
        case sounding(FeedbackEvent, id: UInt32)
        /// It ended on its own (its time limit, or the theme has no such feedback) while the
        /// calls still want it: not triggered again until they want another.
        case spent(FeedbackEvent)

        var event: FeedbackEvent {
            switch self {
            case .requested(let event, _), .sounding(let event, _), .spent(let event): return event
            }
        }
    }

    private let service: SessionService
    /// The ringing calls by id, and whether each rings or waits (another call is live).
    private var ringing: [String: CallDetail] = [:]
    /// Calls that would ring but screening holds back (silence, ignore, a reject being hung up),
    /// kept so that one whose hang-up fails rings after all.
    private var held: [String: CallDetail] = [:]
    /// Screening's word on a call: nil when no rule spoke of it.
    var screening: (String) -> ScreeningAction? = { _ in nil }
    /// A dialer runs in the session and rings for every call itself (docs/phones.md): telwatch
    /// then plays nothing, so no call rings twice.
    var standsAside: () -> Bool = { false }
    private var ring: Ring?
    private var requests: UInt64 = 0
    /// A missed-call feedback is out: another missed call meanwhile adds nothing to hear.
    private var missedOut = false
    /// Feedbacks that ended while a trigger was unanswered, by id: feedbackd may say that an
    /// event its theme does not have ended before its answer to the trigger (with the id) comes.
    /// Bounded, and emptied as each trigger is answered.
    private var endedEarly: [UInt32: UInt32] = [:]
    /// feedbackd's `FeedbackEnded` reason for an event the theme has no feedback for (G_MAXUINT).
    static let reasonNotFound = UInt32.max
    /// The events the theme has no feedback for, each said once. Without `phone-call-waiting`
    /// a waiting call rings as an incoming one.
    private var unknownEvents: Set<FeedbackEvent> = []
    private var waitingUnknown: Bool { unknownEvents.contains(.callWaiting) }
    /// A ring is triggered with this timeout (seconds) and ended with `EndFeedback`: it outlasts
    /// any ring a network allows, and cannot sound forever if telwatch missed the call's end.
    static let ringLimit: Int32 = 300
    static let appID = "telwatch"

    init(service: SessionService) {
        self.service = service
        service.onAppeared = { [weak self] in self?.update() }
        // What it played went with it; the ring is triggered again when it is back.
        service.onVanished = { [weak self] in
            self?.ring = nil
            self?.endedEarly.removeAll()
            self?.missedOut = false
        }
    }

    func start() {
        service.subscribe(member: "FeedbackEnded") { [weak self] message in
            guard let self else { return }
            guard let (id, reason) = try? message.decode(UInt32.self, UInt32.self) else {
                return self.service.malformed("FeedbackEnded", message, expected: "uu")
            }
            self.ended(id: id, reason: reason)
        }
    }

    func receive(_ event: TrackerEvent) {
        switch event {
        case .transition(let call, _), .updated(let call):
            if call.state == .incoming, let detail = call.detail, detail == .ringing || detail == .waiting {
                if screening(call.id)?.rings ?? true {
                    ringing[call.id] = detail
                } else {
                    ringing.removeValue(forKey: call.id)
                    held[call.id] = detail
                }
            } else {
                ringing.removeValue(forKey: call.id)
                held.removeValue(forKey: call.id)
            }
            update()
        case .missed(let call):
            ringing.removeValue(forKey: call.id)
            held.removeValue(forKey: call.id)
            update()
            // A screened call was not missed by anyone: it makes no sound at all.
            if screening(call.id)?.rings ?? true { missed() }
        case .idle:
            ringing.removeAll()
            held.removeAll()
            update()
        case .busy, .announced, .withdrawn:
            break
        }
    }

    /// Screening decided about a live call after it began ringing (its number came late), or its
    /// hang-up failed: it stops ringing, or rings after all.
    func screened(_ id: String, rings: Bool) {
        if rings {
            if let detail = held.removeValue(forKey: id) { ringing[id] = detail }
        } else if let detail = ringing.removeValue(forKey: id) {
            held[id] = detail
        }
        update()
    }

    /// Rings no more (telwatch is stopping).
    func stop() {
        ringing.removeAll()
        update()
    }

    /// Which ring the calls want: an incoming call's, else a waiting call's, else none.
    private var wanted: FeedbackEvent? {
        if ringing.values.contains(.ringing) { return .incomingCall }
        guard !ringing.isEmpty else { return nil }
        return waitingUnknown ? .incomingCall : .callWaiting
    }

    /// A dialer came or went: the ring follows.
    func refresh() { update() }

    private func update() {
        let want = standsAside() ? nil : wanted
        // A trigger is out: its answer puts right whatever changed meanwhile.
        if case .requested? = ring { return }
        guard ring?.event != want else { return }
        if case .sounding(_, let id)? = ring { end(id) }
        ring = nil
        guard let want, service.isPresent else { return }
        requests += 1
        let request = requests
        ring = .requested(want, request: request)
        service.call("TriggerFeedback", Self.trigger(want, timeout: Self.ringLimit), reuse: want.rawValue) {
            [weak self] result in
            self?.answered(want, request: request, result)
        }
    }

    private static func trigger(_ event: FeedbackEvent, timeout: Int32) -> [DBusValue] {
        [.string(appID), .string(event.rawValue), PropertyMap().dbusValue, .int32(timeout)]
    }

    private func answered(_ event: FeedbackEvent, request: UInt64, _ result: Result<Message, DBusError>) {
        // Not this trigger's owner any more (it went, and the ring was asked of the next one).
        guard case .requested(_, request)? = ring else { return }
        switch result {
        case .success(let reply):
            if let id = try? reply.decode(UInt32.self) {
                service.worked()
                let endedReason = endedEarly.removeValue(forKey: id)
                endedEarly.removeAll()
                if let endedReason {
                    ring = .spent(event)
                    if endedReason == Self.reasonNotFound { notFound(event) }
                } else {
                    ring = .sounding(event, id: id)
                }
            } else {
                ring = .spent(event)
                service.failed("TriggerFeedback(\(event.rawValue)) answered '\(reply.signature)', not an id")
            }
        case .failure(let error):
            ring = .spent(event)
            if error != .disconnected { service.failed("feedbackd refused \(event.rawValue): \(error)") }
        }
        // The calls may want another ring, or none, by now.
        update()
    }

    /// The theme has no feedback for this event: said once; a waiting call then rings as a call.
    private func notFound(_ event: FeedbackEvent) {
        guard unknownEvents.insert(event).inserted else { return }
        guard event == .callWaiting else { return service.say("the feedback theme has no \(event.rawValue)") }
        service.say("the feedback theme has no \(event.rawValue); a waiting call rings as \(FeedbackEvent.incomingCall.rawValue)")
    }

    private func ended(id: UInt32, reason: UInt32) {
        switch ring {
        case .sounding(let event, id)?:
            ring = .spent(event)
            guard reason == Self.reasonNotFound else { return }
            // feedbackd says "not found" as well when the user's profile (quiet, silent) has no
            // feedback for the event: that is the profile's silence, followed as it is, and no
            // theme without the event (docs/phone-actions.md). Only in `full` is the theme short.
            service.readString("Profile") { [weak self] profile in
                guard let self, profile == nil || profile == "full" else { return }
                self.notFound(event)
                self.update()
            }
        case .requested?:
            if endedEarly.count < 16 { endedEarly[id] = reason }
        default:
            break
        }
    }

    /// A missed call's feedback: played once (timeout -1), nothing to end.
    private func missed() {
        guard !missedOut, !standsAside() else { return }
        missedOut = true
        service.call("TriggerFeedback", Self.trigger(.missedCall, timeout: -1), reuse: FeedbackEvent.missedCall.rawValue) {
            [weak self] result in
            self?.missedOut = false
            switch result {
            case .success: self?.service.worked()
            case .failure(.disconnected): break
            case .failure(let error): self?.service.failed("feedbackd refused \(FeedbackEvent.missedCall.rawValue): \(error)")
            }
        }
    }

    private func end(_ id: UInt32) {
        service.call("EndFeedback", [.uint32(id)]) { [weak self] result in
            switch result {
            case .success: self?.service.worked()
            case .failure(.disconnected): break
            case .failure(let error): self?.service.failed("feedbackd did not end feedback \(id): \(error)")
            }
        }
    }
}
