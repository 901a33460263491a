import CallMonitor

/// A screening decision about one call, as the pipeline carries it (`screened`).
public struct ScreenedCall: Equatable, Sendable {
    public var call: CallSnapshot
    public var decision: ScreeningDecision
    /// nil unless the action is `reject`, or a `deflect` the stack refused (then the call is rejected).
    public var hangup: HangupOutcome?
    /// nil unless the action is `deflect`.
    public var deflection: HangupOutcome?

    public init(call: CallSnapshot, decision: ScreeningDecision, hangup: HangupOutcome? = nil,
                deflection: HangupOutcome? = nil) {
        self.call = call
        self.decision = decision
        self.hangup = hangup
        self.deflection = deflection
    }

    /// What the phone does now: a deflection the stack refused is a reject, and a reject whose
    /// hang-up failed rings.
    public var action: ScreeningAction {
        if case .failed? = hangup { return .allow }
        if case .failed? = deflection { return .reject }
        return decision.action
    }

    /// Why the stack's last answer about this call failed (the hang-up's, else the deflection's).
    public var failure: String? { hangup?.failure ?? deflection?.failure }

    /// The line that says what went wrong, once the stack refused: nil while nothing did.
    public var failureText: String? {
        let which = "call \(call.id.prefix(8)) (\(decision.ruleText))"
        if let why = hangup?.failure { return "the stack did not hang up \(which): \(why); it rings" }
        if let why = deflection?.failure {
            return "the stack did not deflect \(which) to \(decision.deflectTo ?? "?"): \(why); "
                + (hangup == nil ? "it is rejected when it rings again" : "it is rejected")
        }
        return nil
    }
}
