import Glibc

/// Where the broker is: `mqtt://HOST[:PORT]` (1883) or `mqtts://HOST[:PORT]` (8883, TLS).
public struct MQTTBroker: Equatable, Sendable {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// nil for anything but `mqtt://` or `mqtts://` with a host and an optional port 1…65535.
    /// An IPv6 address is written in brackets (`mqtt://[::1]:1883`).
    public init?(url: String) {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            tls = false
            rest = url.dropFirst(7)
        } else if url.hasPrefix("mqtts://") {
            tls = true
            rest = url.dropFirst(8)
        } else {
            return nil
        }
        // No path, no user info: credentials never ride on the command line.
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains(" ") else { return nil }
        var host = String(rest)
        var port = tls ? 8883 : 1883
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let number = Int(rest[rest.index(after: colon)...]) else { return nil }
            host = String(rest[..<colon])
            port = number
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self.init(host: host, port: port, tls: tls)
    }

    public var url: String {
        (tls ? "mqtts://" : "mqtt://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}

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
    /// Take `silence CALL_ID` from `TOPIC/command` (`--mqtt-commands`); off by default.
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
