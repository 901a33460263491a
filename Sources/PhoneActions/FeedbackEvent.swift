/// The feedbackd events telwatch triggers (the Event naming spec's names, which themes use).
enum FeedbackEvent: String {
    /// A call rings: for as long as it rings.
    case incomingCall = "phone-incoming-call"
    /// A second call rings while one is live: the theme's softer signal, when it has one.
    case callWaiting = "phone-call-waiting"
    /// A call was missed: once.
    case missedCall = "phone-missed-call"
}
