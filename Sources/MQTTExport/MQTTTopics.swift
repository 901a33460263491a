/// telwatch's topics under one root.
public struct MQTTTopics: Sendable {
    public let root: String
    /// `online` / `offline` (retained; `offline` is also the last will).
    public var status: String { root + "/status" }
    /// The live calls, a JSON array of each call's latest event line (retained).
    public var calls: String { root + "/calls" }
    /// The background run: `{"running": …}` (retained).
    public var run: String { root + "/run" }
    /// A summary for dashboards and Home Assistant: state, ringing, last caller (retained).
    public var state: String { root + "/state" }
    /// Every event, QoS 1, not retained.
    public var events: String { root + "/events" }
    /// Each call's outcome as it happens (`rang`, `answered`, `missed`, `rejected`, `ended`),
    /// QoS 1, not retained: Home Assistant's event entity, which a restart must not fire again.
    public var callEvent: String { root + "/call-event" }
    /// Where commands are taken from with `--mqtt-commands` (`silence`, `hangup`, `answer`, `tones`).
    public var command: String { root + "/command" }
    /// With `--mqtt-commands`: `online` while exactly one call rings (the one `reject ringing`
    /// names), else `offline` (retained): Home Assistant's Reject and Silence buttons are
    /// available only then.
    public var ringingCall: String { root + "/ringing-call" }
    public let discoveryPrefix: String

    public init(root: String, discoveryPrefix: String) {
        self.root = root
        self.discoveryPrefix = discoveryPrefix
    }
}
