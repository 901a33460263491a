import Loop

/// How one hook invocation ended.
public enum HookResult: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case killed(signal: Int32)
    /// Still running at the timeout: stopped; `status` is how it finally ended.
    case timedOut(ChildExit)
    case failedToStart(String)
    /// Never started: telwatch was shutting down and out of time.
    case cancelled
    /// Never started: too many hooks were already waiting.
    case dropped(waiting: Int)

    public var isSuccess: Bool { self == .exited(0) }

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .killed(let signal): return "killed by signal \(signal)"
        case .timedOut(let status): return "timed out and was stopped (\(status))"
        case .failedToStart(let why): return "could not start: \(why)"
        case .cancelled: return "cancelled at shutdown"
        case .dropped(let waiting): return "dropped: \(waiting) hooks were already waiting"
        }
    }
}

public struct HookOutcome: Sendable {
    public var event: String
    /// The ordering key it ran under (a call id, or "run").
    public var key: String
    public var command: [String]
    public var pid: Int32?
    /// Wall-clock start and how long it ran.
    public var startedAt: Double
    public var duration: Double
    public var result: HookResult
}
