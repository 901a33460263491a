/// A daily window of quiet hours on some weekdays.
public struct QuietHours: Sendable, Equatable {
    /// Minutes after midnight, local time; `end` before `start` runs past midnight.
    public var start: Int
    public var end: Int
    /// Weekdays the window starts on: 0 Sunday … 6 Saturday.
    public var days: Set<Int>
    public var action: ScreeningRuleAction
    public var source: String

    /// Whether `time` falls in the window (a window past midnight belongs to the day it began).
    public func contains(_ time: LocalTime) -> Bool {
        if start <= end {
            return days.contains(time.weekday) && time.minute >= start && time.minute < end
        }
        if time.minute >= start { return days.contains(time.weekday) }
        return time.minute < end && days.contains((time.weekday + 6) % 7)
    }
}
