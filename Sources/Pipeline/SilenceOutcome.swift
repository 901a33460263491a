import CallMonitor

/// What asking to silence a call did (`CallScreener.silence`).
public enum SilenceOutcome: Equatable, Sendable {
    /// It rang and stops now: the decision, to be sent into the pipeline.
    case silenced(ScreenedCall)
    /// It makes no sound already: screening silenced, ignored or rejected it.
    case quietAlready(ScreeningAction)
    /// No live call has that id.
    case noSuchCall
    /// It is not ringing in: an outgoing call, or one already answered.
    case notRinging(CallState)
}
