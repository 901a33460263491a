import Pipeline

/// What Home Assistant shows of one entity: the keys of its discovery config that are its own
/// (the device, the topics and the availability are every entity's).
struct HomeAssistantEntityLook {
    var name: String
    var icon: String?
    var deviceClass: String?
    var options: [String]?
    var stateClass: String?
    var diagnostic = false
    var unit: String?
    var displayPrecision: Int?
    var valueTemplate: String?
    var eventTypes: [String]?

    func write(to object: inout JSONObject) {
        object.add("name", name)
        if let icon { object.add("icon", icon) }
        if let deviceClass { object.add("device_class", deviceClass) }
        if let options { object.add("options", json: HomeAssistantDiscovery.array(options)) }
        if let stateClass { object.add("state_class", stateClass) }
        if diagnostic { object.add("entity_category", "diagnostic") }
        if let unit { object.add("unit_of_measurement", unit) }
        if let displayPrecision { object.add("suggested_display_precision", displayPrecision) }
        if let valueTemplate { object.add("value_template", valueTemplate) }
        if let eventTypes { object.add("event_types", json: HomeAssistantDiscovery.array(eventTypes)) }
    }
}

extension HomeAssistantDiscovery.Entity {
    var look: HomeAssistantEntityLook {
        switch self {
        case .ringing:
            return .init(name: "Ringing", icon: "mdi:phone-ring", deviceClass: "sound",
                         valueTemplate: "{{ 'ON' if value_json.ringing else 'OFF' }}")
        case .callLive:
            return .init(name: "Call live", icon: "mdi:phone-in-talk", deviceClass: "running",
                         valueTemplate: "{{ 'ON' if value_json.live_calls > 0 else 'OFF' }}")
        case .callState:
            return .init(name: "Call state", icon: "mdi:phone", deviceClass: "enum",
                         options: ["idle", "ringing", "dialing", "connected"], valueTemplate: "{{ value_json.state }}")
        case .lastCaller:
            // Null (no call yet) renders `None`: Home Assistant's unknown.
            return .init(name: "Last caller", icon: "mdi:phone-incoming",
                         valueTemplate: "{{ value_json.last_caller_name or value_json.last_caller }}")
        case .missedUnseen:
            return .init(name: "Missed calls unseen", icon: "mdi:phone-missed", stateClass: "measurement",
                         valueTemplate: "{{ value_json.missed_unseen | default(None) }}")
        case .blockedToday:
            // Back to 0 at local midnight: Home Assistant reads the drop as a new cycle.
            return .init(name: "Calls blocked today", icon: "mdi:phone-cancel", stateClass: "total_increasing",
                         valueTemplate: "{{ value_json.blocked_today | default(None) }}")
        case .liveCalls:
            return .init(name: "Live calls", icon: "mdi:phone-log", stateClass: "measurement", diagnostic: true,
                         valueTemplate: "{{ value_json.live_calls }}")
        case .lastMissedCaller:
            return .init(name: "Last missed caller", icon: "mdi:phone-missed",
                         valueTemplate: "{{ value_json.last_missed_caller_name or value_json.last_missed_caller }}")
        case .lastCallTime:
            return .init(name: "Last call", deviceClass: "timestamp", valueTemplate: "{{ value_json.last_call_ended }}")
        case .lastCallDirection:
            return .init(name: "Last call direction", icon: "mdi:phone-outline", deviceClass: "enum",
                         options: ["incoming", "outgoing"], valueTemplate: "{{ value_json.last_call_direction }}")
        case .lastCallDuration:
            return .init(name: "Last call duration", deviceClass: "duration", unit: "s", displayPrecision: 0,
                         valueTemplate: "{{ value_json.last_call_duration }}")
        case .call:
            return .init(name: "Call", icon: "mdi:phone-log", eventTypes: MQTTCallOutcome.allCases.map(\.rawValue))
        case .reject:
            return .init(name: "Reject", icon: "mdi:phone-hangup")
        case .silence:
            return .init(name: "Silence", icon: "mdi:bell-off")
        }
    }
}
