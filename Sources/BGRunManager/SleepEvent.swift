import DBus

/// Something a `SleepCoordinator` did or saw, stamped with the wall clock.
public struct SleepEvent: Equatable, Sendable, FieldedEvent {
    /// Which of the sleep locks an event is about.
    public enum LockRole: String, Equatable, Sendable {
        /// `--sleep-delay-lock`: a delay lock held while awake, so the state is written first.
        case delay
        /// `--resume-grace`: a block lock held for a while after a resume.
        case grace
    }

    public enum Kind: Equatable, Sendable {
        /// The system is going to sleep (`PrepareForSleep(true)`); `runID` is the run live then.
        case sleep(runID: String?, holders: Int)
        /// The system is awake again (`PrepareForSleep(false)`); every stack is read again.
        /// `asleepFor` is nil when the sleep itself was not seen.
        case resume(asleepFor: Double?)
        /// The system went to sleep while a run was live. `lock` is the run's lock state then:
        /// `held` means logind overrode it (a forced suspend, a lid switch that ignores
        /// inhibitors); `unavailable`, `pending` or `off` mean nothing was blocking the sleep.
        /// `inhibit` is what the run's lock covers (`sleep:block`, or `none`).
        case overridden(runID: String, lock: LockState, inhibit: String, holders: Int)
        case lockTaken(LockRole, InhibitorRequest, seconds: Double?)
        /// `expired`: the grace time ran out; else it was given up (the delay lock at sleep).
        case lockReleased(LockRole, expired: Bool)
        case lockUnavailable(LockRole, String)
        /// A `PrepareForSleep` not from logind's current owner: ignored (`suppressed` more not shown).
        case signalIgnored(sender: String, suppressed: Int)
        /// A `PrepareForSleep` from logind that is not one boolean.
        case malformedSignal(signature: String)
        /// The sleep record could not be written: `status` and `doctor` will not show this sleep.
        case stateError(String)
    }

    public var time: Double
    public var kind: Kind

    public init(time: Double, kind: Kind) {
        self.time = time
        self.kind = kind
    }

    /// A stable kebab-case name for output.
    public var name: String {
        switch kind {
        case .sleep: return "sleep"
        case .resume: return "resume"
        case .overridden: return "sleep-overridden"
        case .lockTaken(let role, _, _): return "\(role.rawValue)-lock-taken"
        case .lockReleased(let role, _): return "\(role.rawValue)-lock-released"
        case .lockUnavailable(let role, _): return "\(role.rawValue)-lock-unavailable"
        case .signalIgnored: return "sleep-signal-ignored"
        case .malformedSignal: return "sleep-signal-malformed"
        case .stateError: return "state-error"
        }
    }

    /// Whether the event reports something the user should look at.
    public var isWarning: Bool {
        switch kind {
        case .overridden, .lockUnavailable, .signalIgnored, .malformedSignal, .stateError: return true
        case .sleep, .resume, .lockTaken, .lockReleased: return false
        }
    }

    /// The event's data as ordered key/value pairs.
    public var fields: [(key: StaticString, value: FieldValue)] {
        switch kind {
        case .sleep(let runID, let holders):
            return [("run_id", .text(runID)), ("holders", .count(holders))]
        case .resume(let asleepFor):
            return [("asleep_for", .seconds(asleepFor))]
        case .overridden(let runID, let lock, let inhibit, let holders):
            return [("run_id", .text(runID)), ("lock", .text(lock.rawValue)), ("inhibit", .text(inhibit)),
                    ("holders", .count(holders))]
        case .lockTaken(_, let request, let seconds):
            return [("what", .text(request.what)), ("mode", .text(request.mode)), ("seconds", .seconds(seconds))]
        case .lockReleased(_, let expired):
            return [("expired", .flag(expired))]
        case .lockUnavailable(_, let why), .stateError(let why):
            return [("message", .text(why))]
        case .signalIgnored(let sender, let suppressed):
            return [("sender", .text(sender)), ("suppressed", .count(suppressed))]
        case .malformedSignal(let signature):
            return [("signature", .text(signature))]
        }
    }
}
