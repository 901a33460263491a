import CMosquitto
import Glibc
import Loop

/// One connection to the broker through libmosquitto, from its connect to its end, driven by
/// telwatch's loop: the library starts no thread. Its socket is in the loop's epoll set (readable
/// always, writable only while libmosquitto has output queued), and `mosquitto_loop_misc` (the
/// keepalive: a PINGREQ when the link was quiet, the end of a link whose broker stopped
/// answering) runs on a timer that exists only as long as this connection does. A connection that
/// ended is not reused: the link makes a new one, so nothing libmosquitto queued is sent twice.
final class MQTTConnection: LoopHook {
    /// How a connection ended, in words for the one stderr line, and whether the broker refused it.
    struct Ending {
        var reason: String
        /// The broker answered and said no (credentials, ACL): retrying soon will not help.
        var refused: Bool
        /// The broker had accepted this connection: it was lost rather than never made.
        var wasConnected = false
    }

    private let loop: EventLoop
    private var handle: OpaquePointer?
    private var source: IOSource?
    private var keepaliveTimer: TimerSource?
    private(set) var isConnected = false
    /// The broker accepted this connection once (it may be over now).
    private var accepted = false
    private var ending: Ending?
    private var ended = false
    /// The library's last error-level log line: what OpenSSL said about a certificate.
    private var libraryError: String?

    /// The broker accepted the connection (CONNACK 0).
    var onConnected: () -> Void = {}
    /// The connection is over; this object is done.
    var onEnded: (Ending) -> Void = { _ in }
    /// The broker acknowledged (PUBACK) the QoS 1 message with this id.
    var onAcknowledged: (Int32) -> Void = { _ in }
    /// A message arrived on a topic this connection subscribed to.
    var onMessage: (MQTTMessage) -> Void = { _ in }

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Starts a non-blocking connect; throws the reason in words when it cannot even start
    /// (libmosquitto missing, a host that does not resolve, an unreadable certificate file).
    func connect(_ settings: MQTTSettings, clientID: String, will: (topic: String, payload: String)) throws {
        var failure: UnsafePointer<CChar>?
        guard telwatch_mosquitto_load(&failure) != nil else {
            throw MQTTProblem(.setup, "MQTT needs libmosquitto.so.1 (Debian: libmosquitto1), which cannot be loaded: "
                              + (failure.map { String(cString: $0) } ?? "unknown reason"))
        }
        let object = Unmanaged.passUnretained(self).toOpaque()
        guard let handle = mosquitto.new(clientID, true, object) else {
            throw MQTTProblem(.setup, "cannot create an MQTT client: \(String(cString: strerror(errno)))")
        }
        self.handle = handle
        _ = mosquitto.int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        // A ring's message should not wait for Nagle's 40 ms.
        _ = mosquitto.int_option(handle, MOSQ_OPT_TCP_NODELAY, 1)
        if let user = settings.user {
            _ = mosquitto.username_pw_set(handle, user, settings.password)
        }
        _ = mosquitto.will_set(handle, will.topic, Int32(will.payload.utf8.count), will.payload, 1, true)
        if settings.broker.tls {
            let code = mosquitto.tls_set(handle, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil,
                                         settings.certFile, settings.keyFile, nil)
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                throw MQTTProblem(.certificate, "the TLS files cannot be used (\(MQTTConnection.text(of: code))): "
                                  + "check mqtt-ca, mqtt-cert and mqtt-key")
            }
        }
        mosquitto.connect_callback_set(handle) { _, object, code in
            MQTTConnection.from(object)?.connected(code: code)
        }
        mosquitto.disconnect_callback_set(handle) { _, object, code in
            MQTTConnection.from(object)?.disconnected(code: code)
        }
        mosquitto.publish_callback_set(handle) { _, object, mid in
            MQTTConnection.from(object)?.onAcknowledged(mid)
        }
        mosquitto.message_callback_set(handle) { _, object, message in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload = message.payloadlen > 0 && message.payload != nil
                ? Array(UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen))) : []
            MQTTConnection.from(object)?.onMessage(MQTTMessage(topic: String(cString: topic), payload: payload,
                                                               retained: message.retain))
        }
        mosquitto.log_callback_set(handle) { _, object, level, message in
            guard level & (MOSQ_LOG_ERR) != 0, let message else { return }
            MQTTConnection.from(object)?.libraryError = String(cString: message)
        }
        errno = 0
        let code = mosquitto.connect_async(handle, settings.broker.host, Int32(settings.broker.port),
                                           Int32(settings.keepalive))
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            if code == MOSQ_ERR_EAI.rawValue {
                throw MQTTProblem(.resolve, "cannot resolve the broker's host \(settings.broker.host)")
            }
            throw MQTTProblem(code == MOSQ_ERR_TLS.rawValue ? .certificate : .unreachable, "cannot connect to \(settings.broker.url): \(MQTTConnection.text(of: code))"
                              + (libraryError.map { " (\($0))" } ?? ""))
        }
        let fd = mosquitto.socket(handle)
        guard fd >= 0 else { throw MQTTProblem(.unreachable, "cannot connect to \(settings.broker.url)") }
        source = try loop.watch(fd: fd, events: [.readable, .writable]) { [weak self] events in self?.ready(events) }
        // Also bounds a connect that is never answered: loop_misc ends it after a keepalive.
        let period = Double(max(settings.keepalive, 2)) / 2
        keepaliveTimer = try loop.timer { [weak self] in self?.keepalive() }
        keepaliveTimer?.schedule(after: period, repeating: period)
        loop.addHook(self)
    }

    private static func from(_ object: UnsafeMutableRawPointer?) -> MQTTConnection? {
        object.map { Unmanaged<MQTTConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Publishes; returns the message id, or the reason it could not be sent.
    func publish(_ topic: String, _ payload: [UInt8], qos: Int32, retain: Bool) -> Result<Int32, MQTTProblem> {
        guard let handle, isConnected else { return .failure(MQTTProblem(.lost, "not connected")) }
        var mid: Int32 = 0
        let code = payload.withUnsafeBytes { bytes in
            mosquitto.publish(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, qos, retain)
        }
        switch code {
        case MOSQ_ERR_SUCCESS.rawValue:
            return .success(mid)
        case MOSQ_ERR_PAYLOAD_SIZE.rawValue, MOSQ_ERR_OVERSIZE_PACKET.rawValue:
            return .failure(MQTTProblem(.tooLarge, "a message for \(topic) is too large (\(payload.count) bytes) "
                                        + "for the broker; it was not published"))
        default:
            // The write failed: the connection is over from now on (nothing more is published on
            // it), and it ends outside whatever called this.
            isConnected = false
            let reason = MQTTConnection.text(of: code)
            loop.soon { [weak self] in self?.end(reason) }
            return .failure(MQTTProblem(.lost, reason))
        }
    }

    /// Subscribes to `topic` (QoS 1); false when the request could not be queued.
    @discardableResult
    func subscribe(_ topic: String) -> Bool {
        guard let handle, isConnected else { return false }
        return mosquitto.subscribe(handle, nil, topic, 1) == MOSQ_ERR_SUCCESS.rawValue
    }

    /// Says goodbye (a clean DISCONNECT: the broker publishes no last will) and ends.
    func disconnect() {
        guard let handle, !ended else { return }
        if isConnected {
            _ = mosquitto.disconnect(handle)
            _ = mosquitto.loop_write(handle, 1)
        }
        close()
    }

    // MARK: The loop's side

    var phase: TurnPhase { .publish }

    func prepare() -> Double? {
        guard let handle, let source else { return nil }
        source.setEvents(mosquitto.want_write(handle) ? [.readable, .writable] : [.readable])
        return nil
    }

    func afterWait(now: Double) {}

    private func ready(_ events: IOEvents) {
        guard let handle else { return }
        if !events.isDisjoint(with: [.readable, .error, .hangup]) {
            let code = mosquitto.loop_read(handle, 1)
            if code != MOSQ_ERR_SUCCESS.rawValue { return end(MQTTConnection.text(of: code)) }
        }
        if events.contains(.writable), self.handle != nil {
            let code = mosquitto.loop_write(handle, 1)
            if code != MOSQ_ERR_SUCCESS.rawValue { return end(MQTTConnection.text(of: code)) }
        }
    }

    private func keepalive() {
        guard let handle else { return }
        let code = mosquitto.loop_misc(handle)
        if code != MOSQ_ERR_SUCCESS.rawValue { end(MQTTConnection.text(of: code)) }
    }

    private func connected(code: Int32) {
        guard code == 0 else {
            let answer = mosquitto.connack_string(code).map { String(cString: $0) } ?? "code \(code)"
            ending = Ending(reason: "the broker refused the connection: \(answer)", refused: true)
            return
        }
        isConnected = true
        accepted = true
        onConnected()
    }

    private func disconnected(code: Int32) {
        if ending == nil { ending = Ending(reason: MQTTConnection.text(of: code), refused: false) }
    }

    private func end(_ reason: String) {
        guard !ended else { return }
        var ending = self.ending ?? Ending(reason: reason, refused: false)
        if !ending.refused, let libraryError { ending.reason += " (\(libraryError))" }
        ending.wasConnected = accepted
        close()
        onEnded(ending)
    }

    private func close() {
        ended = true
        isConnected = false
        loop.removeHook(self)
        source?.cancel()
        source = nil
        keepaliveTimer?.cancel()
        keepaliveTimer = nil
        if let handle { mosquitto.destroy(handle) }
        handle = nil
    }

    deinit { if let handle { mosquitto.destroy(handle) } }

    static func text(of code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        if code == MOSQ_ERR_CONN_LOST.rawValue { return "the connection was lost" }
        return mosquitto.strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}

/// libmosquitto's functions. Reached only once `MQTTConnection.connect` has loaded the library:
/// every other call needs a client that connect created.
private var mosquitto: telwatch_mosquitto { telwatch_mosquitto_load(nil)!.pointee }
