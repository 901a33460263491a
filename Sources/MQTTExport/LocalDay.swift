import Glibc

/// Days on the local wall clock, for "calls blocked today": which day a moment falls on, and when
/// the next one begins (local midnight, daylight saving time included: `mktime` decides).
enum LocalDay {
    /// A number that grows by one each local day (the local date as yyyymmdd).
    static func number(of seconds: Double) -> Int {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return Int(seconds / 86_400) }
        return Int(parts.tm_year + 1900) * 10_000 + Int(parts.tm_mon + 1) * 100 + Int(parts.tm_mday)
    }

    /// The first moment of the next local day after `seconds`.
    static func nextMidnight(after seconds: Double) -> Double {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return (seconds / 86_400).rounded(.down) * 86_400 + 86_400 }
        parts.tm_mday += 1
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 0
        parts.tm_isdst = -1
        let next = mktime(&parts)
        return next > time ? Double(next) : seconds + 86_400
    }
}
