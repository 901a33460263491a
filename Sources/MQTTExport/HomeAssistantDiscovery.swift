import Pipeline

/// Home Assistant's MQTT discovery (docs/mqtt.md, "Home Assistant"): one retained config per
/// entity under `PREFIX/COMPONENT/telwatch_NODE/ENTITY/config`, all of one device per host, all
/// reading the retained `TOPIC/state` and available while `TOPIC/status` is `online`. "Missed
/// calls unseen" exists only with a call history, "Calls blocked today" only with call screening
/// (their configs are removed otherwise); with discovery off (`--mqtt-homeassistant false`) every
/// config is removed. The "Call" event entity reads `TOPIC/call-event`. Only keys
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
        case missedUnseen = "missed_unseen", blockedToday = "blocked_today", liveCalls = "live_calls"
        case lastMissedCaller = "last_missed_caller", lastCallTime = "last_call_time"
        case lastCallDirection = "last_call_direction", lastCallDuration = "last_call_duration", call

        var component: Component {
            switch self {
            case .ringing, .callLive: return .binarySensor
            case .call: return .event
            default: return .sensor
            }
        }

        /// Entities that name a caller: none on a host that redacts numbers.
        var namesCallers: Bool { self == .lastCaller || self == .lastMissedCaller }
    }

    /// Home Assistant's MQTT platforms telwatch's entities belong to.
    enum Component: String {
        case binarySensor = "binary_sensor", sensor, event
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
            return (topic(entity), config(entity))
        }
    }

    func config(_ entity: Entity) -> String {
        var object = JSONObject()
        switch entity {
        case .ringing:
            object.add("name", "Ringing")
            object.add("icon", "mdi:phone-ring")
            object.add("device_class", "sound")
            object.add("value_template", "{{ 'ON' if value_json.ringing else 'OFF' }}")
        case .callLive:
            object.add("name", "Call live")
            object.add("icon", "mdi:phone-in-talk")
            object.add("device_class", "running")
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
            // Null (no call yet) renders `None`: Home Assistant's unknown.
            object.add("value_template", "{{ value_json.last_caller_name or value_json.last_caller }}")
        case .missedUnseen:
            object.add("name", "Missed calls unseen")
            object.add("icon", "mdi:phone-missed")
            object.add("state_class", "measurement")
            object.add("value_template", "{{ value_json.missed_unseen | default(None) }}")
        case .blockedToday:
            object.add("name", "Calls blocked today")
            object.add("icon", "mdi:phone-cancel")
            // Back to 0 at local midnight: Home Assistant reads the drop as a new cycle.
            object.add("state_class", "total_increasing")
            object.add("value_template", "{{ value_json.blocked_today | default(None) }}")
        case .liveCalls:
            object.add("name", "Live calls")
            object.add("icon", "mdi:phone-log")
            object.add("state_class", "measurement")
            object.add("entity_category", "diagnostic")
            object.add("value_template", "{{ value_json.live_calls }}")
        case .lastMissedCaller:
            object.add("name", "Last missed caller")
            object.add("icon", "mdi:phone-missed")
            object.add("value_template", "{{ value_json.last_missed_caller_name or value_json.last_missed_caller }}")
        case .lastCallTime:
            object.add("name", "Last call")
            object.add("device_class", "timestamp")
            object.add("value_template", "{{ value_json.last_call_ended }}")
        case .lastCallDirection:
            object.add("name", "Last call direction")
            object.add("icon", "mdi:phone-outline")
            object.add("device_class", "enum")
            object.add("options", json: HomeAssistantDiscovery.array(["incoming", "outgoing"]))
            object.add("value_template", "{{ value_json.last_call_direction }}")
        case .lastCallDuration:
            object.add("name", "Last call duration")
            object.add("device_class", "duration")
            object.add("unit_of_measurement", "s")
            object.add("suggested_display_precision", 0)
            object.add("value_template", "{{ value_json.last_call_duration }}")
        case .call:
            object.add("name", "Call")
            object.add("icon", "mdi:phone-log")
            object.add("event_types", json: HomeAssistantDiscovery.array(MQTTCallOutcome.allCases.map(\.rawValue)))
        }
        if entity.component == .binarySensor {
            object.add("payload_on", "ON")
            object.add("payload_off", "OFF")
        }
        object.add("unique_id", "\(node)_\(entity.rawValue)")
        object.add("state_topic", entity == .call ? topics.callEvent : topics.state)
        object.add("availability_topic", topics.status)
        object.add("payload_available", "online")
        object.add("payload_not_available", "offline")
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
