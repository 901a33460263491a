import Glibc

/// What `doctor` says about the history.
public struct HistorySummary: Equatable, Sendable {
    public var calls: Int
    public var unseen: Int
    public var oldest: Double?
}
