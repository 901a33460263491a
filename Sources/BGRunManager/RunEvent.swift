import DBus

/// One background run as events describe it.
public struct RunInfo: Equatable, Sendable {
    public var id: String
    /// Why it started (the first holder's reason).
    public var reason: String
    /// The holder whose arrival started it.
    public var firstHolder: String
    /// Wall-clock seconds.
    public var startedAt: Double
}

/// Something a `BGRunManager` did or saw, stamped with the wall clock.
public struct RunEvent: Equatable, Sendable {
    public var time: Double
    public var kind: Kind

    public enum Kind: Equatable, Sendable {
        case started(RunInfo)
        /// `reason`: `idle` (the last holder left), `expired`, or `shutdown`.
        case stopped(RunInfo, reason: String, duration: Double)
        /// The lease ran out; `stopped` with reason `expired` follows.
        case expired(RunInfo, duration: Double)
        case lockTaken(InhibitorRequest)
        /// Taken again after logind restarted.
        case lockRetaken(InhibitorRequest)
        /// The run goes on, but nothing keeps the device from suspending.
        case lockUnavailable(String)
        case wakelockTaken(KernelWakelock)
        case wakelockUnavailable(String)
        case heartbeat(runID: String, count: Int, elapsed: Double)
        case runCommandStarted(pid: Int32)
        /// `early`: it ended on its own while the run still lived.
        case runCommandExited(pid: Int32, status: ChildExit, early: Bool)
        case runCommandFailed(String)
        /// A run left open by a telwatch that died; its stop hook runs with reason `stale`.
        case staleRunRecovered(RunRecord)
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
        case .heartbeat: return "heartbeat"
        case .runCommandStarted: return "run-command-started"
        case .runCommandExited: return "run-command-exited"
        case .runCommandFailed: return "run-command-failed"
        case .staleRunRecovered: return "stale-run-recovered"
        case .stateError: return "state-error"
        }
    }

    /// Whether the event reports something the user should look at.
    public var isWarning: Bool {
        switch kind {
        case .lockUnavailable, .wakelockUnavailable, .runCommandFailed, .staleRunRecovered, .stateError: return true
        case .runCommandExited(_, _, let early): return early
        default: return false
        }
    }

    /// The event's data as ordered key/value pairs, for text or JSON output.
    public var fields: [(key: String, value: String)] {
        switch kind {
        case .started(let run):
            return [("run_id", run.id), ("reason", run.reason), ("holder", run.firstHolder)]
        case .stopped(let run, let reason, let duration):
            return [("run_id", run.id), ("reason", reason), ("duration", formatSeconds(duration))]
        case .expired(let run, let duration):
            return [("run_id", run.id), ("duration", formatSeconds(duration))]
        case .lockTaken(let request), .lockRetaken(let request):
            return [("what", request.what), ("mode", request.mode)]
        case .lockUnavailable(let why), .wakelockUnavailable(let why), .runCommandFailed(let why),
             .stateError(let why):
            return [("message", why)]
        case .wakelockTaken(let lock):
            return [("name", lock.name)]
        case .heartbeat(let runID, let count, let elapsed):
            return [("run_id", runID), ("count", String(count)), ("elapsed", formatSeconds(elapsed))]
        case .runCommandStarted(let pid):
            return [("pid", String(pid))]
        case .runCommandExited(let pid, let status, let early):
            return [("pid", String(pid)), ("status", status.description), ("early", early ? "true" : "false")]
        case .staleRunRecovered(let record):
            return [("run_id", record.runID), ("reason", record.reason), ("pid", String(record.pid)),
                    ("started_at", formatSeconds(record.startedAt))]
        }
    }
}
