import Pipeline

/// Home Assistant's MQTT discovery (docs/mqtt.md, "Home Assistant"): one retained config per
/// entity under `PREFIX/COMPONENT/telwatch_NODE/ENTITY/config`, all of one device per host, all
/// reading the retained `TOPIC/state` and available while `TOPIC/status` is `online`. "Missed
/// calls unseen" exists only with a call history, "Calls blocked today" only with call screening
/// (their configs are removed otherwise); with discovery off (`--mqtt-homeassistant false`) every
/// config is removed. The "Call" event entity reads `TOPIC/call-event`. The Reject and Silence
/// buttons exist only with `--mqtt-commands`: they send `reject ringing` and `silence ringing` to
/// `TOPIC/command`, and are available only while `TOPIC/ringing-call` is `online` too (exactly one
/// call rings). Only keys of Home Assistant's documented discovery schema are written (a test checks them).
struct HomeAssistantDiscovery {
    let settings: MQTTSettings
    let topics: MQTTTopics
    let redactNumbers: Bool
    /// A call history exists to count missed calls from.
    let countsMissedCalls: Bool
    /// Call screening is on: it counts the calls it blocked today.
    let countsBlockedCalls: Bool

    /// `[a-zA-Z0-9_-]` only, as discovery topics and ids require.
    var node: String {
        "telwatch_" + String(settings.hostName.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") ? $0 : "_" })
    }

    enum Entity: String, CaseIterable {
        case ringing, callLive = "call_live", callState = "call_state", lastCaller = "last_caller"
        case missedUnseen = "missed_unseen", blockedToday = "blocked_today", liveCalls = "live_calls"
        case lastMissedCaller = "last_missed_caller", lastCallTime = "last_call_time"
        case lastCallDirection = "last_call_direction", lastCallDuration = "last_call_duration", call
        case reject, silence

        var component: Component {
            switch self {
            case .ringing, .callLive: return .binarySensor
            case .call: return .event
            case .reject, .silence: return .button
            default: return .sensor
            }
        }

        /// What a button sends: its command on the one call ringing now.
        var pressPayload: String? {
            switch self {
            case .reject: return MQTTCommand.pressPayload(.reject)
            case .silence: return MQTTCommand.pressPayload(.silence)
            default: return nil
            }
        }

        /// Entities that name a caller: none on a host that redacts numbers.
        var namesCallers: Bool { self == .lastCaller || self == .lastMissedCaller }
    }

    /// Home Assistant's MQTT platforms telwatch's entities belong to.
    enum Component: String {
        case binarySensor = "binary_sensor", sensor, event, button
    }

    func topic(_ entity: Entity) -> String {
        "\(topics.discoveryPrefix)/\(entity.component.rawValue)/\(node)/\(entity.rawValue)/config"
    }

    /// Every entity's topic and config; an empty payload removes an entity (the last caller of
    /// a host that redacts numbers), as Home Assistant's discovery defines.
    func configs() -> [(topic: String, payload: String)] {
        Entity.allCases.map { entity in
            if !settings.homeAssistant { return (topic(entity), "") }
            if entity.namesCallers && redactNumbers { return (topic(entity), "") }
            if entity == .missedUnseen && !countsMissedCalls { return (topic(entity), "") }
            if entity == .blockedToday && !countsBlockedCalls { return (topic(entity), "") }
            if entity.component == .button && !settings.commands { return (topic(entity), "") }
            return (topic(entity), config(entity))
        }
    }

    func config(_ entity: Entity) -> String {
        var object = JSONObject()
        entity.look.write(to: &object)
        if entity.component == .binarySensor {
            object.add("payload_on", "ON")
            object.add("payload_off", "OFF")
        }
        object.add("unique_id", "\(node)_\(entity.rawValue)")
        if let press = entity.pressPayload {
            object.add("command_topic", topics.command)
            object.add("payload_press", press)
            // Not retained: a command acts when it is sent (a retained one is refused).
            object.add("retain", false)
            object.add("availability", json: HomeAssistantDiscovery.availability([topics.status, topics.ringingCall]))
            object.add("availability_mode", "all")
        } else {
            object.add("state_topic", entity == .call ? topics.callEvent : topics.state)
            object.add("availability_topic", topics.status)
            object.add("payload_available", "online")
            object.add("payload_not_available", "offline")
        }
        var device = JSONObject()
        device.add("identifiers", json: HomeAssistantDiscovery.array([node]))
        device.add("name", "telwatch \(settings.hostName)")
        device.add("manufacturer", "telwatch")
        device.add("model", "telwatch call monitor")
        if let version = settings.softwareVersion { device.add("sw_version", version) }
        object.add("device", json: device.lineBytes)
        var origin = JSONObject()
        origin.add("name", "telwatch")
        if let version = settings.softwareVersion { origin.add("sw_version", version) }
        object.add("origin", json: origin.lineBytes)
        return object.line
    }

    /// Home Assistant's `availability` list: each topic `online` or `offline`.
    static func availability(_ topics: [String]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (index, topic) in topics.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            var object = JSONObject()
            object.add("topic", topic)
            object.add("payload_available", "online")
            object.add("payload_not_available", "offline")
            bytes += object.lineBytes
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }

    static func array(_ strings: [String]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        for (index, string) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONObject.appendQuoted(string, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }
}
