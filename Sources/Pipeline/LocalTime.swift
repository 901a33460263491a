/// A moment on the local wall clock, as quiet hours read it (the caller converts: the decision
/// stays pure).
public struct LocalTime: Sendable, Equatable {
    /// 0 Sunday … 6 Saturday.
    public var weekday: Int
    /// Minutes after midnight.
    public var minute: Int

    public init(weekday: Int, minute: Int) {
        self.weekday = weekday
        self.minute = minute
    }
}
