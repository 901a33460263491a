import Loop
import MQTTExport

/// The `mqtt*` settings of `telwatch watch` (docs/mqtt.md). The password never comes from the
/// command line, where `ps` shows it: only from the config file (`mqtt-password`) or from a
/// credentials file (`--mqtt-credentials FILE`: the user on its first line, the password on its second).
struct MQTTOptions: Equatable {
    var broker: MQTTBroker?
    var topic: String?
    var user: String?
    var password: String?
    var credentialsFile: String?
    var caFile: String?
    var certFile: String?
    var keyFile: String?
    var keepalive = 60
    var reconnectMax: Double = 60
    var outboxLimit = 10_000
    var outboxMaxAge: Double = 7 * 86_400
    var maxMessage = 256 * 1024
    var homeAssistant = true
    var commands = false
    var discoveryPrefix = "homeassistant"

    /// Applies `name` if it is an MQTT setting; false when it is not one.
    mutating func set(_ name: String, _ value: String) throws -> Bool {
        let option = "--" + name
        switch name {
        case "mqtt":
            guard let broker = MQTTBroker(url: value) else {
                throw UsageError("--mqtt takes mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (no user or path), "
                                 + "not \(Parse.quoted(value))")
            }
            self.broker = broker
        case "mqtt-topic":
            guard MQTTSettings.isValidTopic(MQTTSettings.expand(value, hostName: "h")) else {
                throw UsageError("mqtt-topic takes a topic without + or # and without a leading or trailing /, "
                                 + "not \(Parse.quoted(value))")
            }
            topic = value
        case "mqtt-user": user = value
        case "mqtt-password": password = value
        case "mqtt-credentials": credentialsFile = try Parse.directory(value, for: option, absolute: false)
        case "mqtt-ca": caFile = try Parse.directory(value, for: option, absolute: false)
        case "mqtt-cert": certFile = try Parse.directory(value, for: option, absolute: false)
        case "mqtt-key": keyFile = try Parse.directory(value, for: option, absolute: false)
        case "mqtt-keepalive":
            keepalive = Int(try Parse.seconds(value, for: option).rounded())
            guard (5...3600).contains(keepalive) else { throw UsageError("mqtt-keepalive takes 5s to 1h, not \(value)") }
        case "mqtt-reconnect-max": reconnectMax = try Parse.seconds(value, for: option)
        case "mqtt-outbox-limit":
            guard let limit = Int(value), (2...10_000_000).contains(limit) else {
                throw UsageError("mqtt-outbox-limit takes a number of events from 2 to 10000000, not \(Parse.quoted(value))")
            }
            outboxLimit = limit
        case "mqtt-outbox-max-age": outboxMaxAge = try Parse.seconds(value, for: option)
        case "mqtt-max-message":
            guard let bytes = Int(value), (1024...256 << 20).contains(bytes) else {
                throw UsageError("mqtt-max-message takes a size in bytes from 1024 to 268435456, not \(Parse.quoted(value))")
            }
            maxMessage = bytes
        case "mqtt-homeassistant": homeAssistant = try Parse.bool(value, for: option)
        case "mqtt-commands": commands = try Parse.bool(value, for: option)
        case "mqtt-discovery-prefix":
            guard MQTTSettings.isValidTopic(value) else {
                throw UsageError("mqtt-discovery-prefix takes a topic, not \(Parse.quoted(value))")
            }
            discoveryPrefix = value
        default: return false
        }
        return true
    }

    /// The export's settings, or nil when `--mqtt` was not given (then nothing of MQTT exists).
    func settings() throws -> MQTTSettings? {
        guard let broker else { return nil }
        var settings = MQTTSettings(broker: broker, topic: topic)
        settings.user = user
        settings.password = password
        if let credentialsFile {
            let text: String
            do { text = try SmallFile.text(credentialsFile, limit: 4096) } catch {
                throw UsageError("cannot read the MQTT credentials file \(credentialsFile): \(error.reason)")
            }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
            guard let first = lines.first, !first.isEmpty else {
                throw UsageError("\(credentialsFile): expected the MQTT user on the first line and the password on the second")
            }
            settings.user = first
            settings.password = lines.count > 1 ? lines[1] : nil
        }
        guard broker.tls || (caFile == nil && certFile == nil && keyFile == nil) else {
            throw UsageError("mqtt-ca, mqtt-cert and mqtt-key need an mqtts:// broker")
        }
        guard (certFile == nil) == (keyFile == nil) else {
            throw UsageError("mqtt-cert and mqtt-key go together")
        }
        settings.caFile = caFile
        settings.certFile = certFile
        settings.keyFile = keyFile
        settings.keepalive = keepalive
        settings.reconnectMax = reconnectMax
        settings.outboxLimit = outboxLimit
        settings.outboxMaxAge = outboxMaxAge
        settings.maxMessage = maxMessage
        settings.homeAssistant = homeAssistant
        settings.softwareVersion = Release.version
        settings.commands = commands
        settings.discoveryPrefix = discoveryPrefix
        return settings
    }
}
