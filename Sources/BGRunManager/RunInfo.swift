import DBus
import Loop

/// One background run as events describe it.
public struct RunInfo: Equatable, Sendable {
    public var id: String
    /// Why it started (the first holder's reason).
    public var reason: String
    /// The holder whose arrival started it.
    public var firstHolder: String
    /// Wall-clock seconds.
    public var startedAt: Double

    public init(id: String, reason: String, firstHolder: String, startedAt: Double) {
        self.id = id
        self.reason = reason
        self.firstHolder = firstHolder
        self.startedAt = startedAt
    }
}
