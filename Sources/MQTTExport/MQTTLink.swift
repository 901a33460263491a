import Loop

/// Keeps one connection to the broker: connects, and after a failure or a loss connects again
/// with a growing, jittered delay (½ s doubling up to `reconnectMax`, each wait drawn from its
/// upper half so a fleet of hosts does not reconnect in step). The reconnect timer exists only
/// while disconnected. Problems are said on stderr once per kind until a connection succeeds.
final class MQTTLink {
    private let loop: EventLoop
    private let settings: MQTTSettings
    private let clientID: String
    private let will: (topic: String, payload: String)
    private let report: (String) -> Void
    private var connection: MQTTConnection?
    private var retryTimer: TimerSource?
    private var attempts = 0
    private var lastProblem: MQTTProblem.Kind?
    private var stopped = false
    private var lastTooLarge = -Double.infinity

    var onConnected: () -> Void = {}
    var onDisconnected: () -> Void = {}
    var onAcknowledged: (Int32) -> Void = { _ in }
    /// Topics subscribed to on every connection (each starts a clean session).
    var subscriptions: [String] = []
    var onMessage: (MQTTMessage) -> Void = { _ in }

    var isConnected: Bool { connection?.isConnected ?? false }

    init(loop: EventLoop, settings: MQTTSettings, will: (topic: String, payload: String),
         report: @escaping (String) -> Void) {
        self.loop = loop
        self.settings = settings
        self.will = will
        self.report = report
        // The broker allows one connection per client id and drops the older one: the id is the
        // topic's, which is one host's by design (two telwatch on one topic would mix their retained state).
        clientID = "telwatch:" + settings.topic
    }

    func start() { connect() }

    enum Published {
        /// On its way, with this message id (its PUBACK names it).
        case sent(Int32)
        /// Larger than `mqtt-max-message` or than the library takes: it never will be sent.
        case tooLarge
        /// No connection, or it just failed: it may be sent on the next one.
        case notSent
    }

    @discardableResult
    func publish(_ topic: String, _ payload: [UInt8], qos: Int32, retain: Bool) -> Published {
        guard let connection else { return .notSent }
        guard payload.count <= settings.maxMessage else {
            say(MQTTProblem(.tooLarge, "a message for \(topic) is too large (\(payload.count) bytes, mqtt-max-message "
                            + "is \(settings.maxMessage)); it was not published"))
            return .tooLarge
        }
        switch connection.publish(topic, payload, qos: qos, retain: retain) {
        case .success(let mid): return .sent(mid)
        case .failure(let problem) where problem.kind == .tooLarge:
            say(problem)
            return .tooLarge
        case .failure: return .notSent
        }
    }

    /// A clean goodbye: the caller published `offline` first.
    func stop() {
        stopped = true
        retryTimer?.cancel()
        retryTimer = nil
        connection?.disconnect()
        connection = nil
    }

    private func connect() {
        guard !stopped else { return }
        let connection = MQTTConnection(loop: loop)
        connection.onConnected = { [weak self] in self?.connected() }
        connection.onAcknowledged = { [weak self] mid in self?.onAcknowledged(mid) }
        connection.onMessage = { [weak self] message in self?.onMessage(message) }
        connection.onEnded = { [weak self, weak connection] ending in
            guard let self, let connection, self.connection === connection else { return }
            self.ended(ending)
        }
        self.connection = connection
        do {
            try connection.connect(settings, clientID: clientID, will: will)
        } catch let problem as MQTTProblem {
            connection.disconnect()
            self.connection = nil
            say(problem)
            retryLater()
        } catch {
            connection.disconnect()
            self.connection = nil
            say(MQTTProblem(.unreachable, "cannot connect to \(settings.broker.url): \(error)"))
            retryLater()
        }
    }

    private func connected() {
        attempts = 0
        if lastProblem != nil { report("mqtt: connected to \(settings.broker.url) again") }
        lastProblem = nil
        for topic in subscriptions where connection?.subscribe(topic) != true {
            report("mqtt: cannot subscribe to \(topic); its commands are not heard on this connection")
        }
        onConnected()
    }

    private func ended(_ ending: MQTTConnection.Ending) {
        let wasConnected = ending.wasConnected
        connection = nil
        let kind: MQTTProblem.Kind = ending.refused ? .refused
            : ending.reason.contains("TLS") || ending.reason.contains("certificate") ? .certificate
            : wasConnected ? .lost : .unreachable
        let what = wasConnected ? "lost the broker \(settings.broker.url)" : "cannot connect to \(settings.broker.url)"
        say(MQTTProblem(kind, ending.refused ? "\(ending.reason) (\(settings.broker.url): check mqtt-user and the password)"
                                             : "\(what): \(ending.reason)"))
        onDisconnected()
        retryLater()
    }

    private func say(_ problem: MQTTProblem) {
        // A message too large is about one message, not the link: said at most once a minute.
        if problem.kind == .tooLarge {
            let now = monotonicNow()
            guard now - lastTooLarge >= 60 else { return }
            lastTooLarge = now
        } else {
            guard problem.kind != lastProblem else { return }
            lastProblem = problem.kind
        }
        report("mqtt: " + problem.description + (problem.kind == .tooLarge ? "" : "; events wait in the outbox"))
    }

    private func retryLater() {
        guard !stopped else { return }
        let ceiling = min(settings.reconnectMax, 0.5 * Double(1 << min(attempts, 16)))
        attempts += 1
        let delay = Double.random(in: (ceiling / 2)...max(ceiling, 0.001))
        do {
            if retryTimer == nil { retryTimer = try loop.timer { [weak self] in self?.retry() } }
            retryTimer?.schedule(after: delay)
        } catch {
            report("mqtt: no timer to reconnect with (\(error)); MQTT is off until telwatch restarts")
        }
    }

    private func retry() {
        // The timer is dropped while a connection lives (after its handler returns): nothing of
        // MQTT but the keepalive wakes the loop then.
        loop.soon { [weak self] in
            guard let self, !(self.retryTimer?.isArmed ?? false) else { return }
            self.retryTimer = nil
        }
        connect()
    }
}
