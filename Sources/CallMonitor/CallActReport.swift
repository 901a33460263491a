/// What an act or a dial came to.
public struct CallActReport: Equatable, Sendable {
    /// The call dialled, or the call acted on.
    public var outcome: Result<CallKey, CallActFailure>
    /// Seconds from the request to the stack's last answer; 0 when refused before asking it.
    public var elapsed: Double
    /// Tones the stack accepted, in order (`sendTones` on ModemManager sends one at a time and
    /// stops at the first refusal); 0 for other acts.
    public var tonesSent: Int
    /// The calls put on hold by answering a waiting call (the active calls of its modem as
    /// telwatch knew them when asked); empty for other acts, and when the act failed.
    public var held: [CallKey]

    public init(_ outcome: Result<CallKey, CallActFailure>, elapsed: Double = 0, tonesSent: Int = 0,
                held: [CallKey] = []) {
        self.outcome = outcome
        self.elapsed = elapsed
        self.tonesSent = tonesSent
        self.held = held
    }

    public var failure: CallActFailure? {
        if case .failure(let failure) = outcome { return failure }
        return nil
    }
}
