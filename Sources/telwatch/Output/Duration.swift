enum Duration {
    /// Longer than anything telwatch times (about 31 years): a value past it came from a damaged
    /// or hostile file (the history, a run record), and is no duration at all.
    static let longest = 1e9

    /// `7.7 s`, `2 min 05 s`, `1 h 02 min`; `?` for what cannot be a duration.
    static func text(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds <= longest else { return "?" }
        if seconds < 60 {
            let tenths = Int((seconds * 10).rounded())
            // 59.97 s rounds up to a whole minute, said as one: "1 min 00 s", never "60.0 s".
            if tenths < 600 { return "\(tenths / 10).\(tenths % 10) s" }
        }
        let whole = Int(seconds.rounded())
        if whole < 3600 {
            let s = whole % 60
            return "\(whole / 60) min \(s < 10 ? "0" : "")\(s) s"
        }
        let minutes = (whole / 60) % 60
        return "\(whole / 3600) h \(minutes < 10 ? "0" : "")\(minutes) min"
    }
}
