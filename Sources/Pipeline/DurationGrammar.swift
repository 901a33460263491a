/// A unit of a duration as telwatch reads it.
public enum DurationUnit: String, CaseIterable, Sendable {
    case milliseconds = "ms", seconds = "s", minutes = "m", hours = "h", days = "d", weeks = "w"

    public var seconds: Double {
        switch self {
        case .milliseconds: return 0.001
        case .seconds: return 1
        case .minutes: return 60
        case .hours: return 3600
        case .days: return 86_400
        case .weeks: return 604_800
        }
    }
}

/// The one way telwatch reads a duration, wherever it is given (flags, the config file,
/// `log --since`, the screening rules' `except repeat` and `except called`): ASCII digits with an
/// optional fraction (`1.5h`), then a unit from those the setting allows; with none, the
/// setting's `bare` unit, if it has one. Nothing else: no sign, no exponent, no hex, no blanks.
/// Each setting has its floor and ceiling, and says both, with its units, when it refuses.
public struct DurationGrammar: Sendable {
    public let units: [DurationUnit]
    /// The unit of a number given without one (flags: seconds); nil: a unit is needed.
    public let bare: DurationUnit?
    public let floor: Double
    public let ceiling: Double

    public init(units: [DurationUnit] = DurationUnit.allCases, bare: DurationUnit? = nil, floor: Double, ceiling: Double) {
        self.units = units
        self.bare = bare
        self.floor = floor
        self.ceiling = ceiling
    }

    /// Seconds, or nil when `text` is not a duration of this setting or is out of its range.
    public func seconds(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        var end = 0
        while end < bytes.count, bytes[end] >= UInt8(ascii: "0"), bytes[end] <= UInt8(ascii: "9") { end += 1 }
        guard end > 0 else { return nil }
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            let fraction = end + 1
            end = fraction
            while end < bytes.count, bytes[end] >= UInt8(ascii: "0"), bytes[end] <= UInt8(ascii: "9") { end += 1 }
            guard end > fraction else { return nil }
        }
        // A hundred digits already say more than any ceiling.
        guard end <= 100, let value = Double(String(decoding: bytes[..<end], as: UTF8.self)) else { return nil }
        let suffix = String(decoding: bytes[end...], as: UTF8.self)
        guard let unit = suffix.isEmpty ? bare : units.first(where: { $0.rawValue == suffix }) else { return nil }
        let seconds = value * unit.seconds
        guard seconds.isFinite, seconds >= floor, seconds <= ceiling else { return nil }
        return seconds
    }

    /// What the setting takes, for its error: `from 10s to 366d (digits, a fraction allowed, then
    /// ms, s, m, h, d or w; without a unit: seconds)`.
    public var accepted: String {
        let names = units.map(\.rawValue)
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
        return "from \(text(floor)) to \(text(ceiling)) (digits, a fraction allowed, then \(list)"
            + (bare.map { "; without a unit: \($0 == .seconds ? "seconds" : $0.rawValue)" } ?? "") + ")"
    }

    /// `seconds` in the largest allowed unit that says it whole: `100ms`, `366d`, `24h`.
    public func text(_ seconds: Double) -> String {
        if seconds == 0 { return "0" }
        for unit in units.reversed() {
            let count = seconds / unit.seconds
            if count >= 1, abs(count - count.rounded()) < 1e-9 * count { return "\(Int(count.rounded()))\(unit.rawValue)" }
        }
        return "\(seconds)s"
    }
}
