/// How a screened call's hang-up (or deflection) went.
public enum HangupOutcome: Equatable, Sendable {
    /// `Hangup` (or `Deflect`) was sent to the stack.
    case requested
    /// The stack (or polkit) refused it: a rejected call rings after all, a deflected one is rejected.
    case failed(String)

    /// Why the hang-up failed, or nil.
    public var failure: String? {
        if case .failed(let why) = self { return why }
        return nil
    }

    public var word: String {
        switch self {
        case .requested: return "requested"
        case .failed: return "failed"
        }
    }
}
