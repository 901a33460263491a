/// The service's counters at one moment.
public struct ServiceStats: Equatable, Sendable {
    public enum Occasion: String, Sendable {
        /// Asked for with SIGUSR1.
        case stats
        /// The last line before telwatch exits.
        case exit
    }

    public var occasion: Occasion
    public var time: Double
    /// Signals decoded from the stacks' owners since the start.
    public var signals: UInt64
    public var uptime: Double

    public init(occasion: Occasion, time: Double, signals: UInt64, uptime: Double) {
        self.occasion = occasion
        self.time = time
        self.signals = signals
        self.uptime = uptime
    }
}
