/// The environment of a hook or run command: a base (normally telwatch's own environment) minus
/// any `TELWATCH_` variable it inherited, so a child never mistakes a stale value for the
/// event's, then the event's variables. Values travel byte for byte; nothing is ever parsed
/// by a shell.
public enum ChildEnvironment {
    public static let prefix = "TELWATCH_"

    public static func make(base: [String], variables: [(name: String, value: String)]) -> [String] {
        var out = base.filter { !$0.hasPrefix(prefix) }
        for (name, value) in variables {
            // A C environment string ends at NUL; D-Bus strings cannot carry one anyway.
            out.append(name + "=" + value.replacing("\u{0}", with: ""))
        }
        return out
    }
}

/// Seconds with millisecond precision and no exponent: "1700000000.123", "0.250".
/// Used for every time and duration handed to hooks and written to the state file.
public func formatSeconds(_ seconds: Double) -> String {
    guard seconds.isFinite, abs(seconds) < 9e12 else { return "0.000" }
    let millis = Int64((abs(seconds) * 1000).rounded())
    let fraction = String(millis % 1000)
    return (seconds < 0 && millis > 0 ? "-" : "") + String(millis / 1000) + "."
        + String(repeating: "0", count: 3 - fraction.count) + fraction
}
