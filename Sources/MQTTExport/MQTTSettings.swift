import Glibc

/// Everything the MQTT export needs, from the options and the config file.
public struct MQTTSettings: Sendable {
    public var broker: MQTTBroker
    /// The root of telwatch's topics (`telwatch/HOST` by default): `…/status`, `…/calls`, `…/run`,
    /// `…/state`, `…/events`.
    public var topic: String
    public var user: String?
    public var password: String?
    /// TLS: the CA file that signed the broker's certificate, and an optional client certificate.
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    /// The MQTT keepalive (seconds): a PINGREQ after this long without traffic; the idle cost of MQTT.
    public var keepalive: Int = 60
    /// The longest wait between two connection attempts (seconds).
    public var reconnectMax: Double = 60
    /// The outbox keeps at most this many unacknowledged events, none older than `outboxMaxAge`.
    public var outboxLimit: Int = 10_000
    public var outboxMaxAge: Double = 7 * 86_400
    /// A message larger than this is not published (said on stderr): most brokers refuse large
    /// packets by closing the connection, and the same event sent again would close every one.
    public var maxMessage: Int = 256 * 1024
    /// Publish Home Assistant discovery configs under `discoveryPrefix`.
    public var homeAssistant: Bool = true
    public var discoveryPrefix: String = "homeassistant"
    /// telwatch's version: Home Assistant shows it on the device and in the discovery's origin.
    public var softwareVersion: String?
    /// Take `silence`, `hangup`/`reject`, `answer` and `tones` from `TOPIC/command`, and give Home
    /// Assistant Reject and Silence buttons (`--mqtt-commands`); off by default.
    public var commands = false
    /// The host's name: the default topic and the Home Assistant device are named after it.
    public var hostName: String

    public init(broker: MQTTBroker, topic: String? = nil, hostName: String = MQTTSettings.localHostName()) {
        self.broker = broker
        self.hostName = hostName
        self.topic = MQTTSettings.expand(topic ?? "telwatch/%h", hostName: hostName)
    }

    /// `%h` in a topic is the host name.
    public static func expand(_ topic: String, hostName: String) -> String {
        topic.replacing("%h", with: hostName)
    }

    /// The host name, fit to be one topic level: MQTT's wildcards and separator (which a host name
    /// normally does not hold) become `_`.
    public static func localHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let name = gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let safe = String(name.map { "/+#\0".contains($0) ? "_" : $0 })
        return safe.isEmpty ? "localhost" : safe
    }

    /// A topic telwatch publishes to may hold neither wildcard, nor be empty.
    public static func isValidTopic(_ topic: String) -> Bool {
        !topic.isEmpty && !topic.contains("+") && !topic.contains("#") && !topic.hasPrefix("/")
            && !topic.hasSuffix("/") && !topic.contains("\0") && topic.utf8.count < 60_000
    }
}
