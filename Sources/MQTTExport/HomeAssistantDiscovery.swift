import Pipeline

/// Home Assistant's MQTT discovery (docs/mqtt.md, "Home Assistant"): one retained config per
/// entity under `PREFIX/COMPONENT/telwatch_NODE/ENTITY/config`, all of one device per host, all
/// reading the retained `TOPIC/state` and available while `TOPIC/status` is `online`. "Missed
/// calls unseen" exists only with a call history, "Calls blocked today" only with call screening
/// (their configs are removed otherwise). Only keys
/// of Home Assistant's documented discovery schema are written (a test checks them).
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
        case missedUnseen = "missed_unseen", blockedToday = "blocked_today"

        var component: String {
            switch self {
            case .ringing, .callLive: return "binary_sensor"
            case .callState, .lastCaller, .missedUnseen, .blockedToday: return "sensor"
            }
        }
    }

    func topic(_ entity: Entity) -> String {
        "\(topics.discoveryPrefix)/\(entity.component)/\(node)/\(entity.rawValue)/config"
    }

    /// Every entity's topic and config; an empty payload removes an entity (the last caller of
    /// a host that redacts numbers), as Home Assistant's discovery defines.
    func configs() -> [(topic: String, payload: String)] {
        Entity.allCases.map { entity in
            if entity == .lastCaller && redactNumbers { return (topic(entity), "") }
            if entity == .missedUnseen && !countsMissedCalls { return (topic(entity), "") }
            if entity == .blockedToday && !countsBlockedCalls { return (topic(entity), "") }
            return (topic(entity), config(entity))
        }
    }

    func config(_ entity: Entity) -> String {
        var object = JSONObject()
        switch entity {
        case .ringing:
            object.add("name", "Ringing")
            object.add("icon", "mdi:phone-ring")
            object.add("value_template", "{{ 'ON' if value_json.ringing else 'OFF' }}")
        case .callLive:
            object.add("name", "Call live")
            object.add("icon", "mdi:phone-in-talk")
            object.add("value_template", "{{ 'ON' if value_json.live_calls > 0 else 'OFF' }}")
        case .callState:
            object.add("name", "Call state")
            object.add("icon", "mdi:phone")
            object.add("device_class", "enum")
            object.add("options", json: HomeAssistantDiscovery.array(["idle", "ringing", "dialing", "connected"]))
            object.add("value_template", "{{ value_json.state }}")
        case .lastCaller:
            object.add("name", "Last caller")
            object.add("icon", "mdi:phone-incoming")
            object.add("value_template", "{{ value_json.last_caller_name or value_json.last_caller or 'none' }}")
        case .missedUnseen:
            object.add("name", "Missed calls unseen")
            object.add("icon", "mdi:phone-missed")
            object.add("state_class", "measurement")
            object.add("value_template", "{{ value_json.missed_unseen | default(0) }}")
        case .blockedToday:
            object.add("name", "Calls blocked today")
            object.add("icon", "mdi:phone-cancel")
            // Back to 0 at local midnight: Home Assistant reads the drop as a new cycle.
            object.add("state_class", "total_increasing")
            object.add("value_template", "{{ value_json.blocked_today | default(0) }}")
        }
        if entity.component == "binary_sensor" {
            object.add("payload_on", "ON")
            object.add("payload_off", "OFF")
        }
        object.add("unique_id", "\(node)_\(entity.rawValue)")
        object.add("state_topic", topics.state)
        object.add("availability_topic", topics.status)
        object.add("payload_available", "online")
        object.add("payload_not_available", "offline")
        var device = JSONObject()
        device.add("identifiers", json: HomeAssistantDiscovery.array([node]))
        device.add("name", "telwatch \(settings.hostName)")
        device.add("manufacturer", "telwatch")
        device.add("model", "telwatch call monitor")
        object.add("device", json: device.lineBytes)
        return object.line
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
