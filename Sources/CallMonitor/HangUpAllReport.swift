/// What hanging up every call of a modem (or of every modem) came to.
public struct HangUpAllReport: Equatable, Sendable {
    /// The modems whose stack hung up all their calls, as `stack`/`path`, in the order asked; or
    /// the first refusal (the modems after it are not asked).
    public var outcome: Result<[HungUpModem], CallActFailure>
    /// Seconds from the request to the stack's last answer; 0 when refused before asking it.
    public var elapsed: Double

    public init(_ outcome: Result<[HungUpModem], CallActFailure>, elapsed: Double = 0) {
        self.outcome = outcome
        self.elapsed = elapsed
    }

    public var failure: CallActFailure? {
        if case .failure(let failure) = outcome { return failure }
        return nil
    }
}

/// One modem whose calls were all hung up.
public struct HungUpModem: Hashable, Sendable {
    public var stack: BackendKind
    public var path: String

    public init(stack: BackendKind, path: String) {
        self.stack = stack
        self.path = path
    }
}
