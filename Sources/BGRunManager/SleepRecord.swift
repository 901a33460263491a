import DBus
import Processes

/// The last sleep and resume telwatch saw, and whether a sleep overrode a live run, as written to
/// the state directory (`last-sleep`) for `telwatch status` and `telwatch doctor`. It outlives the
/// process, so the count of overrides adds up across restarts.
public struct SleepRecord: Equatable, Sendable {
    /// Wall-clock seconds of the last `PrepareForSleep(true)` and `PrepareForSleep(false)`.
    public var sleptAt: Double?
    public var resumedAt: Double?
    /// Whether the last sleep came while a run was live.
    public var lastSleepOverridden: Bool
    /// How many sleeps came while a run was live, ever (in this state directory).
    public var overrides: Int
    /// The last of them: when, which run, and the state of its lock then (`held`: logind went
    /// to sleep despite it; `unavailable`, `pending`, `off`: nothing was blocking it).
    public var lastOverrideAt: Double?
    public var lastOverrideRun: String?
    public var lastOverrideLock: LockState?

    public init(sleptAt: Double? = nil, resumedAt: Double? = nil, lastSleepOverridden: Bool = false,
                overrides: Int = 0, lastOverrideAt: Double? = nil, lastOverrideRun: String? = nil,
                lastOverrideLock: LockState? = nil) {
        self.sleptAt = sleptAt
        self.resumedAt = resumedAt
        self.lastSleepOverridden = lastSleepOverridden
        self.overrides = overrides
        self.lastOverrideAt = lastOverrideAt
        self.lastOverrideRun = lastOverrideRun
        self.lastOverrideLock = lastOverrideLock
    }

    /// The last sleep has no resume after it (the system is asleep, or telwatch stopped before it woke).
    public var isAsleep: Bool {
        guard let sleptAt else { return false }
        return resumedAt.map { $0 < sleptAt } ?? true
    }

    /// `key=value` lines (`RecordFields`).
    public var encoded: String {
        var fields: [(key: String, value: String)] = [("version", "1")]
        if let sleptAt { fields.append(("slept_at", formatSeconds(sleptAt))) }
        if let resumedAt { fields.append(("resumed_at", formatSeconds(resumedAt))) }
        fields.append(("last_sleep_overridden", lastSleepOverridden ? "true" : "false"))
        fields.append(("overrides", String(overrides)))
        if let lastOverrideAt { fields.append(("last_override_at", formatSeconds(lastOverrideAt))) }
        if let lastOverrideRun { fields.append(("last_override_run", lastOverrideRun)) }
        if let lastOverrideLock { fields.append(("last_override_lock", lastOverrideLock.rawValue)) }
        return RecordFields.encode(fields)
    }

    /// Parses `encoded`; nil when it is not a version 1 record or a number is malformed.
    public init?(encoded text: String) {
        guard let fields = RecordFields.decode(text), fields["version"] == "1",
              let overrides = fields["overrides"].flatMap({ Int($0) }) else { return nil }
        func seconds(_ key: String) -> Double?? {
            guard let text = fields[key] else { return .some(nil) }
            guard let value = Double(text), value.isFinite else { return nil }
            return .some(value)
        }
        guard let sleptAt = seconds("slept_at"), let resumedAt = seconds("resumed_at"),
              let lastOverrideAt = seconds("last_override_at") else { return nil }
        self.init(sleptAt: sleptAt, resumedAt: resumedAt,
                  lastSleepOverridden: fields["last_sleep_overridden"] == "true", overrides: overrides,
                  lastOverrideAt: lastOverrideAt, lastOverrideRun: fields["last_override_run"],
                  lastOverrideLock: fields["last_override_lock"].flatMap(LockState.init(rawValue:)))
    }
}
