import CallMonitor

/// A screening decision about one call, as the pipeline carries it (`screened`).
public struct ScreenedCall: Equatable, Sendable {
    public var call: CallSnapshot
    public var decision: ScreeningDecision
    /// nil unless the action is `reject`.
    public var hangup: HangupOutcome?

    public init(call: CallSnapshot, decision: ScreeningDecision, hangup: HangupOutcome? = nil) {
        self.call = call
        self.decision = decision
        self.hangup = hangup
    }

    /// What the phone does now: a reject whose hang-up failed rings.
    public var action: ScreeningAction {
        if case .failed? = hangup { return .allow }
        return decision.action
    }
}
