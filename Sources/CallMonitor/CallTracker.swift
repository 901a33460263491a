// The pure call tracker: backend events in, per-call transitions and aggregate edges out.
//
// Rules (docs/modem-stacks.md §1):
// - `.transition` only when state or detail really changes; `.updated` when only number, name,
//   multiparty (or an unknown direction becoming known) changed. A reason alone is stored
//   silently and shows in the next event.
// - First sight: `.transition(previous: nil)`, then `.busy` if it is the first live call.
//   End: `.transition(.disconnected)`, then `.missed` (incoming, never connected), then `.idle`
//   if no live call remains.
// - `disconnected` exactly once per call, whichever of `.ended`, `callRemoved`, `backendLost`,
//   `modemRemoved` comes first.
// - Unknown phases (`.unknown(raw)`, or no phase at all) never change state. A call is tracked
//   only once a known phase arrives: a `callAppeared` without a known live phase is remembered
//   as *pending* (its modem, `initial` and the fields it carried) and becomes a call when a
//   `callChanged` brings a live phase.
//
// Memory: a live call is kept until it ends. An ended call leaves a small *tombstone* (key and
// modem, no snapshot) so that later observations on its key are ignored; the tombstone is
// forgotten when the backend removes the call object, when a new call appears on the path, when
// the backend or modem goes away, or when it falls out of the bounded memory (at most
// `endedMemory` most recent tombstones, and separately at most `endedMemory` pending keys).
// `backendLost`, `modemRemoved` and `callRemoved` forget the key entirely: the objects are gone,
// so a later live observation on that path is a new call.
//
// A modem's identity (`modemIdentified`, docs/modem-stacks.md §11) is no event: it is kept per
// modem, stamped on that modem's live calls and on calls that start there, and forgotten with the
// modem or its backend (after the calls it ends, so their last events still carry it).
//
// A call an earlier telwatch left live (`remember`, docs/modem-stacks.md §1.8) that the start's
// sync finds live on its key, and that may be the same call, starts under its id, first sight and
// answer; what a stack's first sync did not find is forgotten (`forgetRemembered`).
//
// After a resume (`learnedOnResume`), the resync's findings are reconciled with what was known
// before the sleep, and every event they cause is flagged `resumed`:
// - a live call listed again in the same state: nothing (reported once, not twice); in another
//   state: its transition; listed ended, or not listed at all (`callRemoved`): one `disconnected`;
// - a call listed on the path of a live call that plainly cannot have become it (a connected call
//   back to ringing or dialing, ringing turned dialing or back, another direction, another known
//   number: oFono hands a freed path to the next call at once): the new call first, then the old
//   one's `disconnected` (reason `removed`), so a run both hold goes on;
// - a call listed already ended that was never seen (ModemManager keeps terminated calls listed):
//   news, unlike at start-up, where it is history. It is reported as one `disconnected` from its
//   first state (incoming, dialing, or connected when the backend says it was), then `missed` when
//   it was incoming and never connected as far as anyone can tell. No `busy`/`idle`: it held nothing.
// - a live call found that was not known: its first sight, not `initial` (that means "live at start").

public struct CallTracker {
    /// How many ended-but-not-removed calls (and, separately, pending keys) are remembered.
    public static let defaultEndedMemory = 256

    private struct LiveCall {
        var snapshot: CallSnapshot
        /// First seen as incoming (ringing or waiting): an unanswered end is missed even if the
        /// backend later claims another direction.
        var firstSeenIncoming: Bool
        /// The backend said the call was connected (`CallObservation.everConnected`) though no
        /// connected state was seen: its end is not missed.
        var connectedUnseen = false
    }

    private struct Pending {
        var modem: ModemPath
        var initial: Bool
        var observation: CallObservation
    }

    private let makeID: () -> String
    private var live: [CallKey: LiveCall] = [:]
    /// The keys of `live` in first-seen order: the live calls are asked for after every turn that
    /// changed them (the state directory's record), too often to sort them each time.
    private var liveOrder: [CallKey] = []
    /// Ended calls whose objects may still exist: value = modem.
    private var ended: RecentMemory<ModemPath>
    /// Keys that appeared without a known live phase.
    private var pending: RecentMemory<Pending>
    /// New call objects announced before their state is known: each is a live call by the
    /// stack's own account, so it holds the run until it becomes a call or goes. Its id is given
    /// at the announcement and kept when the call becomes known.
    private var announced: RecentMemory<(modem: ModemPath, id: String)>
    /// What each modem is, as its backend last said (`modemIdentified`); forgotten with the modem.
    private var identities: [ModemKey: ModemIdentity] = [:]
    /// The calls an earlier telwatch left live, until the start's sync of their stack is done.
    private var remembered: [CallKey: RememberedCall] = [:]

    public init(makeID: @escaping () -> String = CallID.random) {
        self.init(makeID: makeID, endedMemory: CallTracker.defaultEndedMemory)
    }

    /// `endedMemory`: bound on remembered ended calls (and on pending keys); negative means 0.
    public init(makeID: @escaping () -> String = CallID.random, endedMemory: Int) {
        self.makeID = makeID
        self.ended = RecentMemory(limit: endedMemory)
        self.pending = RecentMemory(limit: endedMemory)
        self.announced = RecentMemory(limit: endedMemory)
    }

    /// Live calls, in first-seen order.
    public var liveCalls: [CallSnapshot] {
        liveOrder.compactMap { live[$0]?.snapshot }
    }

    /// How many calls are live (O(1); `liveCalls` sorts and copies every snapshot).
    public var liveCount: Int { live.count }

    /// The live call on `key`, if any (ended calls are not kept as snapshots).
    public func call(_ key: CallKey) -> CallSnapshot? {
        live[key]?.snapshot
    }

    /// Number of keys remembered besides live calls (ended-not-removed, pending, announced); bounded.
    public var rememberedCount: Int {
        ended.count + pending.count + announced.count
    }

    /// Calls announced whose state is not known yet.
    public var announcedCount: Int { announced.count }

    /// The calls an earlier telwatch left live (docs/modem-stacks.md §1.8): one that the start's
    /// sync finds live (`initial`) on the same key, and that may be the same call (`mayBe`), goes on
    /// under its id, first sight and answer, so that every sink, and the next telwatch, knows it by
    /// one id. Given before the backends start.
    public mutating func remember(_ calls: [RememberedCall]) {
        for call in calls { remembered[call.key] = call }
    }

    /// The start's sync of `backend` is done (or it is not running): a call it did not find live
    /// ended while no telwatch looked, and a call it lists later is another one.
    public mutating func forgetRemembered(of backend: BackendKind) {
        guard !remembered.isEmpty else { return }
        remembered = remembered.filter { $0.key.backend != backend }
    }

    public mutating func apply(_ event: BackendEvent, at time: Double) -> [TrackerEvent] {
        guard case .learnedOnResume(let found) = event else { return applyObserved(event, at: time) }
        return reconcile(found, at: time).map(\.flaggedResumed)
    }

    /// What applying one backend event did: the events so far, and what decides the aggregate
    /// edges and withdrawals told after them.
    private struct Outcome {
        var events: [TrackerEvent] = []
        /// The call the event started: `busy` if it is the first live one.
        var started: CallSnapshot?
        /// The last call the event ended: `idle` if no live call remains.
        var lastEnded: CallSnapshot?
        /// Announcements the event ended: each is `withdrawn` unless its call is live now.
        var unannounced: [(key: CallKey, id: String)] = []
    }

    /// A backend event as it happened (or as a start-up sync found it).
    private mutating func applyObserved(_ event: BackendEvent, at time: Double) -> [TrackerEvent] {
        let liveBefore = live.count
        // Whatever else an event says of an announced key, the announcement is over: the call is
        // known now (its first transition carries the announced id), or it is gone.
        let announcedID = event.key.flatMap { announced.remove($0)?.id }
        var outcome = Outcome()
        switch event {
        case let .callAnnounced(key, modem):
            announce(key, modem: ModemPath(modem), keeping: announcedID, &outcome)
        case let .callAppeared(key, modem, observation, initial):
            appear(key, modem: ModemPath(modem), observation, initial: initial, announcedID: announcedID,
                   time: time, &outcome)
        case let .callChanged(key, observation):
            change(key, observation, announcedID: announcedID, time: time, &outcome)
        case let .callRemoved(key, reason):
            remove(key, reason: reason, time: time, &outcome)
        case let .backendLost(backend):
            loseBackend(backend, time: time, &outcome)
        case let .modemRemoved(backend, modem):
            removeModem(ModemKey(backend: backend, path: modem), time: time, &outcome)
        case let .modemIdentified(backend, modem, identity):
            learnIdentity(identity, of: ModemKey(backend: backend, path: modem))
        case let .learnedOnResume(found):
            return reconcile(found, at: time).map(\.flaggedResumed)
        }
        // Announced again, the call keeps its announcement; else it ended (see `closed`).
        if let key = event.key, let announcedID, !announced.contains(key) {
            outcome.unannounced.append((key, announcedID))
        }
        return closed(outcome, liveBefore: liveBefore)
    }

    /// A new call object: announced with the id its call will keep, unless it is already live or
    /// ended. Announced again, it keeps the id it was given.
    private mutating func announce(_ key: CallKey, modem: ModemPath, keeping earlierID: String?,
                                   _ outcome: inout Outcome) {
        if let earlierID {
            announced.insert(key, (modem, earlierID))
        } else if live[key] == nil, !ended.contains(key) {
            let id = makeID()
            outcome.events.append(.announced(key, id: id))
            for evicted in announced.insert(key, (modem, id)) {
                outcome.events.append(.withdrawn(evicted.key, id: evicted.value.id))
            }
        }
    }

    /// A call listed or added: one in a live phase starts (under its announced id, if it had
    /// one), one already ended is history (no events), one in no known phase waits as pending.
    /// A resync that lists a live call again updates it.
    private mutating func appear(_ key: CallKey, modem: ModemPath, _ observation: CallObservation, initial: Bool,
                                 announcedID: String?, time: Double, _ outcome: inout Outcome) {
        if live[key] != nil {
            nameModem(modem, of: key)
            update(key, observation, time: time, out: &outcome.events, ended: &outcome.lastEnded)
            return
        }
        ended.remove(key)
        pending.remove(key)
        switch normalized(observation.phase) {
        case let .live(state, detail)?:
            outcome.started = start(key, id: announcedID, modem: modem, observation, state: state, detail: detail,
                                    initial: initial, time: time, out: &outcome.events)
        case .ended?:
            // History (e.g. a terminated ModemManager call still listed): no events.
            ended.insert(key, modem)
        case .unknown?, nil:
            pending.insert(key, Pending(modem: modem, initial: initial, observation: observation))
        }
    }

    /// A live call first seen through its own signal, whose modem a listing names at last.
    private mutating func nameModem(_ modem: ModemPath, of key: CallKey) {
        guard modem.isKnown, let current = live[key], !current.snapshot.modem.isKnown else { return }
        let modemIdentity = identity(of: key.backend, modem)
        live[key]?.snapshot.modem = modem
        live[key]?.snapshot.modemIdentity = modemIdentity
    }

    /// A change to a call: a live call is updated; an ended one waits for its removal or a new
    /// `callAppeared`; a pending one starts once a live phase comes (or is history once ended);
    /// an unknown key in a live phase is a call appearing before a sync listed it (or after a
    /// removal), on a modem nothing has named yet.
    private mutating func change(_ key: CallKey, _ observation: CallObservation, announcedID: String?,
                                 time: Double, _ outcome: inout Outcome) {
        if live[key] != nil {
            update(key, observation, time: time, out: &outcome.events, ended: &outcome.lastEnded)
        } else if ended.contains(key) {
            // Already disconnected; wait for its removal or a new callAppeared.
        } else if var waiting = pending.remove(key) {
            waiting.observation.merge(observation)
            switch normalized(observation.phase) {
            case let .live(state, detail)?:
                outcome.started = start(key, id: announcedID, modem: waiting.modem, waiting.observation,
                                        state: state, detail: detail, initial: waiting.initial,
                                        time: time, out: &outcome.events)
            case .ended?:
                ended.insert(key, waiting.modem)
            case .unknown?, nil:
                pending.insert(key, waiting)
            }
        } else if case let .live(state, detail)? = normalized(observation.phase) {
            outcome.started = start(key, id: announcedID, modem: .unknown, observation, state: state, detail: detail,
                                    initial: false, time: time, out: &outcome.events)
        }
    }

    /// The call object went: a live call ends, with the backend's reason, else the last one it
    /// was told, else `removed`; the key is forgotten.
    private mutating func remove(_ key: CallKey, reason: CallEndReason?, time: Double, _ outcome: inout Outcome) {
        ended.remove(key)
        pending.remove(key)
        if let call = live[key] {
            let why = reason ?? call.snapshot.reason ?? .removed
            outcome.lastEnded = finish(key, reason: why, time: time, out: &outcome.events)
        }
    }

    /// The stack went: everything known of it is forgotten, its live calls end (`backend-lost`).
    private mutating func loseBackend(_ backend: BackendKind, time: Double, _ outcome: inout Outcome) {
        identities = identities.filter { $0.key.backend != backend }
        ended.removeAll { key, _ in key.backend == backend }
        pending.removeAll { key, _ in key.backend == backend }
        outcome.unannounced += announced.removeAll { key, _ in key.backend == backend }.map { ($0.key, $0.value.id) }
        for key in liveKeysInOrder(where: { $0.key.backend == backend }) {
            outcome.lastEnded = finish(key, reason: .backendLost, time: time,
                                       out: &outcome.events)
        }
    }

    /// A modem went: what is known of its calls is forgotten, its live calls end (`modem-removed`).
    private mutating func removeModem(_ modem: ModemKey, time: Double, _ outcome: inout Outcome) {
        let path = ModemPath(modem.path)
        ended.removeAll { key, callModem in key.backend == modem.backend && callModem == path }
        pending.removeAll { key, waiting in key.backend == modem.backend && waiting.modem == path }
        outcome.unannounced += announced
            .removeAll { key, entry in key.backend == modem.backend && entry.modem == path }
            .map { ($0.key, $0.value.id) }
        for key in liveKeysInOrder(where: { $0.key.backend == modem.backend && $0.modem == path }) {
            outcome.lastEnded = finish(key, reason: .modemRemoved, time: time,
                                       out: &outcome.events)
        }
        // After its calls ended: their last events still say which modem they were on.
        identities.removeValue(forKey: modem)
    }

    /// Not news on its own: the modem's calls carry it in their next events.
    private mutating func learnIdentity(_ identity: ModemIdentity, of modem: ModemKey) {
        identities[modem] = identity.isUnknown ? nil : identity
        for key in live.keys where key.backend == modem.backend && live[key]?.snapshot.modem == ModemPath(modem.path) {
            live[key]?.snapshot.modemIdentity = identity
        }
    }

    /// The event's own events, then the announcements it ended without a call, then the edge
    /// of the live-call count it crossed, if any.
    private func closed(_ outcome: Outcome, liveBefore: Int) -> [TrackerEvent] {
        var out = outcome.events
        for (key, id) in outcome.unannounced where live[key] == nil { out.append(.withdrawn(key, id: id)) }
        if liveBefore == 0, !live.isEmpty, let started = outcome.started {
            out.append(.busy(started))
        } else if liveBefore > 0, live.isEmpty, let lastEnded = outcome.lastEnded {
            out.append(.idle(lastEnded))
        }
        return out
    }

    // MARK: - After a resume

    /// What a resync after a resume found, against what was known before the sleep (see the top).
    private mutating func reconcile(_ found: BackendEvent, at time: Double) -> [TrackerEvent] {
        guard case let .callAppeared(key, modem, observation, _) = found else {
            if case .learnedOnResume(let inner) = found { return reconcile(inner, at: time) }
            return applyObserved(found, at: time)
        }
        // A call found on resume is not "live at start".
        let listed = BackendEvent.callAppeared(key, modem: modem, observation, initial: false)
        if let current = live[key] {
            guard case let .live(state, detail)? = normalized(observation.phase),
                  Self.isAnotherCall(current.snapshot, observation, state: state)
            else { return applyObserved(listed, at: time) }
            // Both hold the same key: the old call leaves first, its events are told after the
            // new call's, so that a run both hold goes on.
            var ending: [TrackerEvent] = []
            finish(key, reason: .removed, time: time, out: &ending)
            var starting: [TrackerEvent] = []
            let listedModem = ModemPath(modem)
            start(key, id: nil, modem: listedModem.isKnown ? listedModem : current.snapshot.modem,
                  observation, state: state, detail: detail, initial: false, time: time, out: &starting)
            return starting + ending
        }
        guard case .ended? = normalized(observation.phase) else { return applyObserved(listed, at: time) }
        // Already reported (or history at start-up): a tombstone says so.
        guard !ended.contains(key) else { return [] }
        var carried = pending.remove(key)?.observation ?? CallObservation()
        carried.merge(observation)
        let path = ModemPath(modem)
        ended.insert(key, path)
        return reportUnseen(key, modem: path, carried, time: time)
    }

    /// A call that came and went while the system slept: one `disconnected` from the state it
    /// must have started in, then `missed` when it was incoming and nothing says it was connected.
    private mutating func reportUnseen(_ key: CallKey, modem: ModemPath, _ observation: CallObservation,
                                       time: Double) -> [TrackerEvent] {
        let direction = observation.direction ?? .unknown
        let connected = observation.everConnected == true
        let previous: CallState? = connected ? .connected
            : direction == .incoming ? .incoming : direction == .outgoing ? .dialing : nil
        let missed = direction == .incoming && !connected
        let snapshot = CallSnapshot(
            id: makeID(), key: key, modem: modem, modemIdentity: identity(of: key.backend, modem), direction: direction, number: observation.number ?? "",
            name: observation.name ?? "", state: .disconnected, detail: nil, reason: observation.reason.map(CallEndReason.init(word:)),
            multiparty: observation.multiparty ?? false, initial: false, resumed: true,
            firstSeen: time, connectedAt: nil, endedAt: time, missed: missed)
        var out: [TrackerEvent] = [.transition(snapshot, previous: previous)]
        if missed { out.append(.missed(snapshot)) }
        return out
    }

    /// Whether a listing of `key` after a resume describes another call than the live one there:
    /// a state no call goes back to, another direction, or another known number.
    static func isAnotherCall(_ current: CallSnapshot, _ observation: CallObservation, state: CallState) -> Bool {
        switch (current.state, state) {
        case (.connected, .incoming), (.connected, .dialing), (.incoming, .dialing), (.dialing, .incoming):
            return true
        default:
            break
        }
        if let direction = observation.direction, direction != .unknown, current.direction != .unknown,
           direction != current.direction {
            return true
        }
        if let number = observation.number, !number.isEmpty, !current.number.isEmpty, number != current.number {
            return true
        }
        return false
    }

    // MARK: - Internals

    /// `.live(.disconnected, _)` is not supposed to happen; treat it as `.ended`.
    private func normalized(_ phase: CallPhase?) -> CallPhase? {
        if case .live(.disconnected, _)? = phase { return .ended }
        return phase
    }

    private func identity(of backend: BackendKind, _ modem: String) -> ModemIdentity {
        identities[ModemKey(backend: backend, path: modem)] ?? .unknown
    }

    private func identity(of backend: BackendKind, _ modem: ModemPath) -> ModemIdentity {
        identity(of: backend, modem.eventValue)
    }

    private func liveKeysInOrder(where match: (CallSnapshot) -> Bool) -> [CallKey] {
        liveOrder.filter { key in live[key].map { match($0.snapshot) } ?? false }
    }

    /// A call's first sight, under `id` when its announcement gave it one.
    @discardableResult
    private mutating func start(
        _ key: CallKey, id: String?, modem: ModemPath, _ observation: CallObservation,
        state: CallState, detail: CallDetail, initial: Bool, time: Double,
        out: inout [TrackerEvent]
    ) -> CallSnapshot {
        var direction = observation.direction ?? .unknown
        if direction == .unknown {
            switch state {
            case .incoming: direction = .incoming
            case .dialing: direction = .outgoing
            case .connected, .disconnected: direction = .unknown
            }
        }
        // Live at start, and known to an earlier telwatch: the same call goes on.
        var earlier = initial ? remembered.removeValue(forKey: key) : nil
        if let known = earlier, !known.mayBe(observation, state: state) { earlier = nil }
        if direction == .unknown, let earlier { direction = earlier.direction }
        let number = observation.number.flatMap { $0.isEmpty ? nil : $0 } ?? earlier?.number ?? ""
        let snapshot = CallSnapshot(
            id: earlier?.id ?? id ?? makeID(),
            key: key,
            modem: modem,
            modemIdentity: identity(of: key.backend, modem),
            direction: direction,
            number: number,
            name: observation.name ?? "",
            state: state,
            detail: detail,
            reason: observation.reason.map(CallEndReason.init(word:)),
            multiparty: observation.multiparty ?? false,
            initial: initial,
            firstSeen: earlier?.firstSeen ?? time,
            // Answered while no telwatch looked: the answer is first known now.
            connectedAt: earlier?.connectedAt ?? (state == .connected ? time : nil),
            endedAt: nil
        )
        let firstSeenIncoming = state == .incoming || earlier?.state == .incoming
        if live[key] != nil { liveOrder.removeAll { $0 == key } }
        live[key] = LiveCall(snapshot: snapshot, firstSeenIncoming: firstSeenIncoming)
        liveOrder.append(key)
        out.append(.transition(snapshot, previous: nil))
        return snapshot
    }

    private mutating func update(
        _ key: CallKey, _ observation: CallObservation, time: Double,
        out: inout [TrackerEvent], ended lastEnded: inout CallSnapshot?
    ) {
        guard var call = live[key] else { return }
        let before = call.snapshot
        var snap = before

        if let direction = observation.direction, direction != .unknown { snap.direction = direction }
        if let number = observation.number, !number.isEmpty || snap.number.isEmpty { snap.number = number }
        if let name = observation.name, !name.isEmpty || snap.name.isEmpty { snap.name = name }
        if let multiparty = observation.multiparty { snap.multiparty = multiparty }
        if let reason = observation.reason { snap.reason = CallEndReason(word: reason) }
        if observation.everConnected == true, snap.connectedAt == nil { call.connectedUnseen = true }

        switch normalized(observation.phase) {
        case .ended?:
            call.snapshot = snap
            live[key] = call
            lastEnded = finish(key, reason: snap.reason, time: time, out: &out)
            ended.insert(key, snap.modem)
            return
        case let .live(state, detail)?:
            snap.state = state
            snap.detail = detail
            if state == .connected, snap.connectedAt == nil { snap.connectedAt = time }
        case .unknown?, nil:
            break
        }

        call.snapshot = snap
        live[key] = call
        if snap.state != before.state || snap.detail != before.detail {
            out.append(.transition(snap, previous: before.state))
        } else if snap.number != before.number || snap.name != before.name
                    || snap.multiparty != before.multiparty || snap.direction != before.direction {
            out.append(.updated(snap))
        }
    }

    /// Ends the live call on `key`: `.transition(.disconnected)`, then `.missed` if it applies.
    /// Leaves no tombstone: only an `.ended` phase does (in `update`), since the object may stay.
    @discardableResult
    private mutating func finish(
        _ key: CallKey, reason: CallEndReason?, time: Double, out: inout [TrackerEvent]
    ) -> CallSnapshot? {
        guard let call = live.removeValue(forKey: key) else { return nil }
        if let place = liveOrder.firstIndex(of: key) { liveOrder.remove(at: place) }
        var snap = call.snapshot
        let previous = snap.state
        snap.state = .disconnected
        snap.detail = nil
        snap.reason = reason
        snap.endedAt = time
        snap.missed = (snap.direction == .incoming || call.firstSeenIncoming) && !snap.everConnected
            && !call.connectedUnseen
        out.append(.transition(snap, previous: previous))
        if snap.missed { out.append(.missed(snap)) }
        return snap
    }
}

extension CallObservation {
    /// Fields reported in `newer` replace ours.
    mutating func merge(_ newer: CallObservation) {
        if let phase = newer.phase { self.phase = phase }
        if let direction = newer.direction { self.direction = direction }
        if let number = newer.number { self.number = number }
        if let name = newer.name { self.name = name }
        if let multiparty = newer.multiparty { self.multiparty = multiparty }
        if let reason = newer.reason { self.reason = reason }
        if let everConnected = newer.everConnected { self.everConnected = everConnected }
    }
}

extension TrackerEvent {
    /// The same event, its snapshot flagged as learned on resume.
    var flaggedResumed: TrackerEvent {
        switch self {
        case .transition(var call, let previous): call.resumed = true; return .transition(call, previous: previous)
        case .updated(var call): call.resumed = true; return .updated(call)
        case .missed(var call): call.resumed = true; return .missed(call)
        case .busy(var call): call.resumed = true; return .busy(call)
        case .idle(var call): call.resumed = true; return .idle(call)
        case .announced, .withdrawn: return self
        }
    }
}
