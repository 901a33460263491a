/// The polkit actions that let a caller act on calls through the API, one per kind of act
/// (dist/polkit-1/io.telwatch.policy; docs/dbus-api.md, "Who may act"). The package grants both
/// to root and the user at the active console, nobody else.
public enum ActAction: String, CaseIterable, Sendable {
    /// Answer, hang up, silence: what the phone's own buttons do to a call that is there.
    case answerHangUp = "io.telwatch.answer-hangup"
    /// Dial, deflect, send tones: what reaches another number, or the far end.
    case dial = "io.telwatch.dial"

    /// What it allows, in words.
    public var acts: String {
        switch self {
        case .answerHangUp: return "answer, hang up and silence calls"
        case .dial: return "dial, deflect and send tones"
        }
    }
}
