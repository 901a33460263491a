import DBus

enum OfonoBus {
    static let service = "org.ofono"
    static let manager = "org.ofono.Manager"
    static let modem = "org.ofono.Modem"
    static let voiceCallManager = "org.ofono.VoiceCallManager"
    static let voiceCall = "org.ofono.VoiceCall"
    static let knownStates: Set<String> = ["active", "held", "dialing", "alerting", "incoming", "waiting",
                                           "disconnected"]

    /// Whether a modem's `Interfaces` value lists the VoiceCallManager: false when absent, nil
    /// when it is not a list of names.
    static func hasVoice(_ interfaces: Variant?) -> Bool? {
        guard let interfaces else { return false }
        return interfaces.value.as([String].self)?.contains(voiceCallManager)
    }
}
