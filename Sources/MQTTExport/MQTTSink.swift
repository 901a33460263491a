import CallMonitor
import Loop
import Pipeline

/// The MQTT export, one sink: every event of the event stream goes to `TOPIC/events` (QoS 1) as
/// its exact JSON line plus `seq`, a number per host that grows by one per event and survives
/// restarts; the live calls, the run and a summary are retained on `TOPIC/calls`, `TOPIC/run`
/// and `TOPIC/state`; `TOPIC/status` is `online`, and `offline` when telwatch stops or (the last
/// will) vanishes. Events go through the durable outbox: published in order, deleted when
/// acknowledged, sent again after a reconnect or a restart. Everything is published in the
/// loop's `prepare`, after the turn's events reached every sink and the outbox committed them.
public final class MQTTSink: EventSink, LoopHook {
    private let settings: MQTTSettings
    private let link: MQTTLink
    private let outbox: MQTTOutbox?
    private let report: (String) -> Void
    private let seconds = RFC3339Seconds()
    private var state: MQTTRetainedState
    /// Message id → sequence number of the events published on this connection and not acknowledged.
    private var inFlight: [Int32: Int] = [:]
    /// The highest sequence number published on this connection: none is sent twice on one.
    private var sentUpTo = 0
    private var retainedDirty = false
    /// Every stack has been read once: the retained state is the truth, not a guess.
    private var ready = false
    /// `online` was published on this connection, after a retained state with every field it
    /// has: Home Assistant never sees an old state as current, nor a field missing.
    private var announced = false
    /// Past the bound on the wait for the history's first count of missed calls.
    private var countWaitOver = false
    private var countWaitTimer: TimerSource?
    private var outboxTrouble = false
    /// Events dropped by the outbox's bounds and not yet announced.
    private var dropped: (count: Int, first: Int, last: Int)?
    /// Past `finish`: the outbox is closed, and the exit line is not published.
    private var finished = false
    /// Stopping, waiting for the last PUBACKs.
    private var finishing: (timer: TimerSource, done: () -> Void)?
    private let loop: EventLoop
    /// Events published at once (QoS 1) before their PUBACKs: libmosquitto's default window.
    static let window = 20
    /// A reloaded configuration may turn redaction on or off: the retained state and Home
    /// Assistant's last caller follow at once.
    public var schema: EventSchema {
        didSet {
            state.schema = schema
            guard oldValue.redactNumbers != schema.redactNumbers, link.isConnected else { return }
            publishDiscovery()
            if announced { publishRetained() }
        }
    }

    /// Whether a call history answers `SinkSession.missedUnseen()` (Home Assistant's "missed calls unseen").
    private let countsMissedCalls: Bool

    /// Whether call screening is on: the retained state counts the calls it blocked today.
    private var countsBlockedCalls: Bool { state.countsBlockedCalls }

    /// Asked for the history's count of missed calls not seen.
    private weak var session: SinkSession?
    /// With `--mqtt-commands`: does what `TOPIC/command` asks, through the session.
    private var commands: MQTTCommandTaker?
    /// Armed only while calls blocked today are counted: at local midnight the count starts again.
    private var midnightTimer: TimerSource?

    /// Missed calls not seen yet, as the history counts them, retained in `TOPIC/state`: asked
    /// of the session in this sink's publish phase, so a missed call's count goes out in the
    /// turn of its event, before the history's own write.
    private func askMissedUnseen() {
        guard countsMissedCalls, ready, let count = session?.missedUnseen(), count != state.missedUnseen else { return }
        state.missedUnseen = count
        retainedDirty = true
        countWaitTimer?.cancel()
        countWaitTimer = nil
    }

    /// Whether the retained state has every field it will have: telwatch is ready and, with a
    /// history, its count of missed calls is in (or did not come within `countWaitBound`).
    private var stateComplete: Bool {
        ready && (!countsMissedCalls || state.missedUnseen != nil || countWaitOver)
    }

    static let countWaitBound = 5.0

    private func becameReady() {
        ready = true
        loop.soon {}
        guard countsMissedCalls, state.missedUnseen == nil, countWaitTimer == nil else { return }
        do {
            let timer = try loop.timer({ [weak self] in self?.countWaitEnded() })
            timer.schedule(after: MQTTSink.countWaitBound)
            countWaitTimer = timer
        } catch {
            // Without the bound, `online` would wait for a count that may never come.
            countWaitOver = true
            report("mqtt: cannot arm the wait for the missed-call count (\(error)); the retained state goes without it")
        }
    }

    private func countWaitEnded() {
        countWaitTimer = nil
        countWaitOver = true
        report("mqtt: the call history did not count the missed calls within \(Int(MQTTSink.countWaitBound)) s; "
               + "the retained state goes without them until it does")
    }

    /// `stateDirectory` holds the outbox; nil keeps it in memory only. `countsBlockedCalls`: call screening is on (the retained
    /// state counts the calls it blocked today); `countsMissedCalls`: a call history answers the
    /// session's `missedUnseen()`.
    public init(settings: MQTTSettings, schema: EventSchema, loop: EventLoop,
                stateDirectory: String?, countsBlockedCalls: Bool = false, countsMissedCalls: Bool = false,
                session: SinkSession? = nil, report: @escaping (String) -> Void) {
        self.settings = settings
        self.countsMissedCalls = countsMissedCalls
        self.session = session
        self.schema = schema
        self.report = report
        self.loop = loop
        let topics = MQTTTopics(root: settings.topic, discoveryPrefix: settings.discoveryPrefix)
        state = MQTTRetainedState(topics: topics, schema: schema)
        state.countsBlockedCalls = countsBlockedCalls
        state.takesCommands = settings.commands
        var opened: MQTTOutbox?
        do {
            opened = try MQTTOutbox(directory: stateDirectory, limit: settings.outboxLimit, maxAge: settings.outboxMaxAge)
        } catch {
            report("mqtt: the outbox \(MQTTOutbox.fileName) cannot be opened (\(error)); "
                   + "events wait in memory only and do not survive a restart")
            do {
                opened = try MQTTOutbox(directory: nil, limit: settings.outboxLimit, maxAge: settings.outboxMaxAge)
            } catch {
                report("mqtt: not even an outbox in memory can be made (\(error)); no event is published, "
                       + "only the retained state")
            }
        }
        outbox = opened
        do { state.memory = try opened?.memory() ?? MQTTCallMemory() } catch {
            report("mqtt: the last calls remembered in \(MQTTOutbox.fileName) cannot be read (\(error)); "
                   + "Home Assistant's last caller is unknown until the next call")
        }
        link = MQTTLink(loop: loop, settings: settings, will: (topics.status, "offline"), report: report)
        link.onConnected = { [weak self] in self?.connected() }
        link.onDisconnected = { [weak self] in self?.disconnected() }
        link.onAcknowledged = { [weak self] mid in self?.acknowledged(mid) }
        if settings.commands {
            commands = MQTTCommandTaker(session: session, topic: topics.command, report: report)
            link.subscriptions = [topics.command]
            link.onMessage = { [weak self] message in
                guard let self else { return }
                self.commands?.take(message, ringing: self.state.ringingCalls)
            }
        }
        loop.addHook(self)
        link.start()
    }

    public func receive(_ delivery: Delivery) {
        guard !finished else { return }
        let event = delivery.event
        let memory = state.memory
        state.note(delivery)
        retainedDirty = retainedDirty || state.changed
        if case .ready = event {
            retainedDirty = state.settleStart() || retainedDirty
            becameReady()
        }
        if state.memory != memory, let outbox {
            do { try outbox.remember(state.memory) } catch { outboxFailed(error) }
        }
        if case .screened(_, let time) = event { followMidnight(after: time) }
        guard let outbox else { return }
        // The event stream's own objects (built once for every sink that writes them), plus `seq`.
        for var object in delivery.records {
            let seq = outbox.takeSeq()
            object.add("seq", seq)
            store(seq: seq, time: event.time, payload: object.line)
        }
    }

    /// The timer is armed while the count is not 0: a day with no blocked call needs no wakeup. It
    /// ends the day of the count, the day of the screened event at `time` (its delivery's): a block
    /// of a day already over when it is delivered is cleared at once.
    private func followMidnight(after time: Double) {
        guard state.blockedToday > 0 else {
            midnightTimer?.cancel()
            midnightTimer = nil
            return
        }
        guard midnightTimer == nil else { return }
        do {
            let timer = try loop.timer { [weak self] in self?.midnight() }
            timer.schedule(after: max(0, LocalDay.nextMidnight(after: time) - wallClockNow()))
            midnightTimer = timer
        } catch {
            report("mqtt: no timer for local midnight (\(error)): calls blocked today counts on into tomorrow")
        }
    }

    private func midnight() {
        midnightTimer = nil
        if state.newDay(at: wallClockNow()) {
            retainedDirty = true
            loop.soon {}
        } else {
            // Woken early (the clock was set back): the day has not turned yet.
            followMidnight(after: wallClockNow())
        }
    }

    /// telwatch is stopping: `offline` (retained) and a clean goodbye; the outbox keeps what waits.
    /// Waits (at most `finishBound` seconds) for the PUBACKs of what was published, so the next
    /// start does not send those events again.
    public func finish(then done: @escaping () -> Void) {
        prepareTurn()
        finished = true
        countWaitTimer?.cancel()
        countWaitTimer = nil
        guard link.isConnected, !inFlight.isEmpty else { return goodbye(then: done) }
        let timer: TimerSource
        do { timer = try loop.timer({ [weak self] in self?.goodbye() }) } catch {
            report("mqtt: cannot arm the wait for the broker's acknowledgements (\(error)); stopping without it: "
                   + "the \(inFlight.count) events not acknowledged are published again at the next start")
            return goodbye(then: done)
        }
        finishing = (timer, done)
        timer.schedule(after: MQTTSink.finishBound)
    }

    static let finishBound = 1.0

    private func goodbye(then done: (() -> Void)? = nil) {
        let done = done ?? finishing?.done
        finishing?.timer.cancel()
        finishing = nil
        if link.isConnected {
            link.publish(state.topics.status, Array("offline".utf8), qos: 1, retain: true)
        }
        link.stop()
        do { try outbox?.close() } catch { outboxFailed(error) }
        done?()
    }

    public var phase: TurnPhase { .publish }

    public func prepare() -> Double? {
        if !finished { prepareTurn() }
        return nil
    }

    public func afterWait(now: Double) {}

    private func prepareTurn() {
        askMissedUnseen()
        commit()
        let outcomes = state.takeOutcomes()
        guard link.isConnected else { return }
        if !announced {
            guard stateComplete else { return pump() }
            announce()
        } else if retainedDirty {
            publishRetained()
        }
        // Not kept for later: an outcome is news now, and a late one would fire an automation late.
        for outcome in outcomes {
            link.publish(state.topics.callEvent, state.outcomeMessage(outcome), qos: 1, retain: false)
        }
        pump()
    }

    /// The retained state first, then `online`: what Home Assistant reads as current is current.
    private func announce() {
        publishRetained()
        link.publish(state.topics.status, Array("online".utf8), qos: 1, retain: true)
        announced = true
    }

    /// `time`: the event's own, as its line says it.
    private func store(seq: Int, time: Double, payload: String) {
        guard let outbox else { return }
        do {
            try outbox.add(seq: seq, time: time, payload: payload)
            if outbox.count > outbox.limit { try dropPastBounds(now: time) }
        } catch {
            outboxFailed(error)
        }
    }

    /// The bounds: the oldest events go (past the count, or older than the age). What went is
    /// tallied and said once per outage on stderr, and once as an `mqtt-dropped` event when the
    /// broker is back (`announceDropped`).
    private func dropPastBounds(now: Double) throws {
        guard let outbox, let range = try outbox.enforceBounds(now: now) else { return }
        if dropped == nil {
            report("mqtt: the outbox is past its bounds (\(outbox.limit) events or \(Int(outbox.maxAge / 3600)) h): "
                   + "dropping the oldest events until the broker is back")
        }
        dropped = (count: (dropped?.count ?? 0) + range.count, first: dropped?.first ?? range.first, last: range.last)
    }

    /// One `mqtt-dropped` event, with a number of its own, says how many events and which numbers were lost.
    private func announceDropped() throws {
        guard let outbox, let dropped else { return }
        self.dropped = nil
        let now = wallClockNow()
        var object = JSONObject(seconds: seconds)
        object.add("event", "mqtt-dropped")
        object.add("time", time: now)
        object.add("dropped", dropped.count)
        object.add("first_seq", dropped.first)
        object.add("last_seq", dropped.last)
        let seq = outbox.takeSeq()
        object.add("seq", seq)
        try outbox.add(seq: seq, time: now, payload: object.line)
    }

    private func commit() {
        do { try outbox?.commit() } catch { outboxFailed(error) }
    }

    private func outboxFailed(_ error: Error) {
        guard !outboxTrouble else { return }
        outboxTrouble = true
        report("mqtt: the outbox cannot be written (\(error)); the events it cannot keep are not published")
    }

    /// Sends what waits, oldest first, keeping at most `window` unacknowledged on the link.
    private func pump() {
        guard let outbox, link.isConnected, inFlight.count < MQTTSink.window else { return }
        let rows: [MQTTOutbox.Row]
        do { rows = try outbox.rows(after: sentUpTo, limit: MQTTSink.window - inFlight.count) } catch {
            return outboxFailed(error)
        }
        for row in rows {
            switch link.publish(state.topics.events, Array(row.payload.utf8), qos: 1, retain: false) {
            case .sent(let mid):
                inFlight[mid] = row.seq
            case .tooLarge:
                // It would fail the same way on every connection: it leaves (said on stderr).
                do { try outbox.acknowledge(seq: row.seq) } catch { outboxFailed(error) }
            case .notSent:
                // The link just went: the outbox sends it on the next connection.
                return
            }
            sentUpTo = row.seq
        }
    }

    private func acknowledged(_ mid: Int32) {
        guard let seq = inFlight.removeValue(forKey: mid) else { return }
        do { try outbox?.acknowledge(seq: seq) } catch { outboxFailed(error) }
        guard finishing == nil else {
            // Not from inside libmosquitto's callback: the goodbye destroys the connection.
            if inFlight.isEmpty { loop.soon { [weak self] in self?.goodbye() } }
            return
        }
        pump()
    }

    private func connected() {
        inFlight.removeAll()
        sentUpTo = 0
        do {
            try dropPastBounds(now: wallClockNow())
            try announceDropped()
        } catch { outboxFailed(error) }
        commit()
        announced = false
        publishDiscovery()
        if stateComplete { announce() }
        pump()
    }

    /// With discovery off, every config is removed (an empty retained message), so an entity
    /// made by an earlier run goes with it.
    private func publishDiscovery() {
        // Without commands, the buttons' availability goes with their configs.
        if !settings.commands { link.publish(state.topics.ringingCall, [], qos: 1, retain: true) }
        for (topic, payload) in HomeAssistantDiscovery(settings: settings, topics: state.topics,
                                                       redactNumbers: schema.redactNumbers,
                                                       countsMissedCalls: countsMissedCalls,
                                                       countsBlockedCalls: countsBlockedCalls).configs() {
            link.publish(topic, Array(payload.utf8), qos: 1, retain: true)
        }
    }

    private func disconnected() {
        inFlight.removeAll()
        if finishing != nil { goodbye() }
    }

    /// QoS 0: each is the whole state, published again on every change and every connection, so
    /// an update lost with a connection is made good by the next one; it saves a PUBACK (a loop
    /// turn) per topic and change.
    private func publishRetained() {
        retainedDirty = false
        for (topic, payload) in state.retainedMessages() {
            link.publish(topic, payload, qos: 0, retain: true)
        }
    }
}
