import Glibc

/// Local wall-clock times for text output (JSON writes RFC 3339: `JSONObject.appendRFC3339`).
enum Timestamp {
    /// `HH:MM:SS.mmm` in local time: what a person watching a terminal wants.
    static func localClock(_ seconds: Double) -> String {
        let (parts, milliseconds) = local(seconds)
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(three(milliseconds))"
    }

    /// `2024-05-01 14:03:12` in local time: a moment a person may look back on.
    static func readable(_ seconds: Double) -> String {
        let (parts, _) = local(seconds)
        return "\(year(parts))-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }

    /// The local calendar time and the milliseconds of `seconds`.
    private static func local(_ seconds: Double) -> (tm, Int) {
        // Times come from the clock, but a NaN must not trap the daemon.
        let total = seconds.isFinite && abs(seconds) < 1e12 ? Int64((seconds * 1000).rounded(.down)) : 0
        var time = time_t(total / 1000)
        var parts = tm()
        localtime_r(&time, &parts)
        return (parts, Int(total % 1000))
    }

    private static func year(_ parts: tm) -> String { String(Int(parts.tm_year) + 1900) }
    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    private static func three(_ value: Int) -> String {
        value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)"
    }
}
