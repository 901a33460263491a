import DBus
import Loop

/// Something a `BGRunManager` did or saw, stamped with the wall clock.
public struct RunEvent: Equatable, Sendable, FieldedEvent {
    public var time: Double
    public var kind: Kind

    public init(time: Double, kind: Kind) {
        self.time = time
        self.kind = kind
    }

    public enum Kind: Equatable, Sendable {
        case started(RunInfo)
        case stopped(RunInfo, reason: RunEndReason, duration: Double)
        /// The lease ran out; `stopped` with reason `expired` follows.
        case expired(RunInfo, duration: Double)
        case lockTaken(InhibitorRequest)
        /// Taken again after logind restarted.
        case lockRetaken(InhibitorRequest)
        /// The run goes on, but nothing keeps the device from suspending.
        case lockUnavailable(String)
        case wakelockTaken(KernelWakelock)
        case wakelockUnavailable(String)
        /// The kernel refused to release the wakelock: the device may stay awake until it is.
        case wakelockReleaseFailed(String)
        /// A timer the run needs (its lease, its heartbeat) could not be made: said, never silent.
        case timerUnavailable(String)
        case heartbeat(runID: String, count: Int, elapsed: Double)
        case runCommandStarted(pid: Int32)
        /// `early`: it ended on its own while the run still lived.
        case runCommandExited(pid: Int32, status: ChildExit, early: Bool)
        case runCommandFailed(String)
        /// A run left open by a telwatch that died; its stop hook runs with reason `stale`.
        case staleRunRecovered(RunRecord)
        /// That dead telwatch's run command was still running: stopped (TERM, KILL after the grace).
        case staleCommandStopped(pid: Int32)
        /// The state directory could not be used: crash recovery and `status` will not see this run.
        case stateError(String)
    }

    /// A stable kebab-case name for output.
    public var name: String {
        switch kind {
        case .started: return "run-started"
        case .stopped: return "run-stopped"
        case .expired: return "run-expired"
        case .lockTaken: return "lock-taken"
        case .lockRetaken: return "lock-retaken"
        case .lockUnavailable: return "lock-unavailable"
        case .wakelockTaken: return "wakelock-taken"
        case .wakelockUnavailable: return "wakelock-unavailable"
        case .wakelockReleaseFailed: return "wakelock-release-failed"
        case .timerUnavailable: return "timer-unavailable"
        case .heartbeat: return "heartbeat"
        case .runCommandStarted: return "run-command-started"
        case .runCommandExited: return "run-command-exited"
        case .runCommandFailed: return "run-command-failed"
        case .staleRunRecovered: return "stale-run-recovered"
        case .staleCommandStopped: return "stale-command-stopped"
        case .stateError: return "state-error"
        }
    }

    /// Whether the event reports something the user should look at.
    public var isWarning: Bool {
        switch kind {
        case .lockUnavailable, .wakelockUnavailable, .wakelockReleaseFailed, .timerUnavailable, .runCommandFailed,
             .staleRunRecovered, .staleCommandStopped, .stateError: return true
        case .runCommandExited(_, _, let early): return early
        default: return false
        }
    }

    /// The event's data as ordered, typed key/value pairs: the keys of its JSON line after
    /// `event` and `time` (docs/user-guide.md, "JSON lines").
    public var fields: [(key: StaticString, value: FieldValue)] {
        switch kind {
        case .started(let run):
            return [("run_id", .text(run.id)), ("reason", .text(run.reason)), ("holder", .text(run.firstHolder))]
        case .stopped(let run, let reason, let duration):
            return [("run_id", .text(run.id)), ("reason", .text(reason.rawValue)), ("duration", .seconds(duration))]
        case .expired(let run, let duration):
            return [("run_id", .text(run.id)), ("duration", .seconds(duration))]
        case .lockTaken(let request), .lockRetaken(let request):
            return [("what", .text(request.what)), ("mode", .text(request.mode))]
        case .lockUnavailable(let why), .wakelockUnavailable(let why), .wakelockReleaseFailed(let why),
             .timerUnavailable(let why), .runCommandFailed(let why), .stateError(let why):
            return [("message", .text(why))]
        case .wakelockTaken(let lock):
            return [("name", .text(lock.name))]
        case .heartbeat(let runID, let count, let elapsed):
            return [("run_id", .text(runID)), ("count", .count(count)), ("elapsed", .seconds(elapsed))]
        case .runCommandStarted(let pid), .staleCommandStopped(let pid):
            return [("pid", .count(Int(pid)))]
        case .runCommandExited(let pid, let status, let early):
            return [("pid", .count(Int(pid))), ("status", .text(status.description)), ("early", .flag(early))]
        case .staleRunRecovered(let record):
            return [("run_id", .text(record.runID)), ("reason", .text(record.reason)), ("pid", .count(Int(record.pid))),
                    ("started_at", .time(record.startedAt))]
        }
    }
}
