import Glibc
import Loop
import Processes

/// The live run as written to the state directory, so that a telwatch killed mid-run can be
/// cleaned up after by the next one, and so that `telwatch status` can tell how long the run
/// has been held and how much of its lease is left.
public struct RunRecord: Equatable, Sendable {
    public var runID: String
    public var reason: String
    /// The telwatch that holds the run.
    public var pid: Int32
    /// That telwatch's start time (`ProcessIdentity`), so a reader can tell it from a process that
    /// got its pid since; nil in records of a telwatch before 0.3.
    public var pidStart: UInt64?
    /// Wall-clock seconds.
    public var startedAt: Double
    public var updatedAt: Double
    public var holders: Int
    /// The lease length, and when it ends unless renewed (wall clock); nil without a lease.
    public var lease: Double?
    public var leaseExpiresAt: Double?
    public var lock: LockState
    /// A kernel wakelock the run holds: recovery must release it, the kernel will not.
    public var wakelock: KernelWakelock?
    /// The run command while it runs (the leader of its own process group): recovery stops it,
    /// should it have outlived its telwatch.
    public var command: ProcessIdentity?

    public init(runID: String, reason: String, pid: Int32, startedAt: Double, updatedAt: Double, holders: Int,
                lease: Double?, leaseExpiresAt: Double?, lock: LockState, wakelock: KernelWakelock?,
                command: ProcessIdentity? = nil, pidStart: UInt64? = nil) {
        self.runID = runID
        self.reason = reason
        self.pid = pid
        self.pidStart = pidStart
        self.startedAt = startedAt
        self.updatedAt = updatedAt
        self.holders = holders
        self.lease = lease
        self.leaseExpiresAt = leaseExpiresAt
        self.lock = lock
        self.wakelock = wakelock
        self.command = command
    }

    /// How long the run has been held at `now`.
    public func heldFor(at now: Double) -> Double { max(0, now - startedAt) }

    /// Lease time left at `now` (0 when overdue), or nil without a lease.
    public func leaseLeft(at now: Double) -> Double? { leaseExpiresAt.map { max(0, $0 - now) } }

    /// `key=value` lines (`RecordFields`), so any reason survives.
    public var encoded: String {
        var fields: [(key: String, value: String)] = [
            ("version", "1"), ("run_id", runID), ("reason", reason), ("pid", String(pid)),
            ("started_at", formatSeconds(startedAt)), ("updated_at", formatSeconds(updatedAt)),
            ("holders", String(holders)), ("lock", lock.rawValue),
        ]
        if let pidStart { fields.append(("pid_start", String(pidStart))) }
        if let lease { fields.append(("lease", formatSeconds(lease))) }
        if let leaseExpiresAt { fields.append(("lease_expires_at", formatSeconds(leaseExpiresAt))) }
        if let wakelock {
            fields.append(("wakelock", wakelock.name))
            fields.append(("wakelock_directory", wakelock.directory))
        }
        if let command {
            fields.append(("command_pid", String(command.pid)))
            fields.append(("command_start", String(command.startTime)))
        }
        return RecordFields.encode(fields)
    }

    /// Parses `encoded`; nil when a required field is missing or malformed. A time is a finite
    /// number (`inf` and `nan` parse as numbers, and an hour or a sum of them would trap), and a
    /// process to stop is one a signal to its group cannot turn into a signal to everyone (`-1`).
    public init?(encoded text: String) {
        let decoded = RecordFields.decode(text)
        func seconds(_ key: String) -> Double? { decoded?[key].flatMap { Double($0) }.flatMap { $0.isFinite ? $0 : nil } }
        guard let fields = decoded, fields["version"] == "1", let runID = fields["run_id"],
              let reason = fields["reason"], let pid = fields["pid"].flatMap({ Int32($0) }),
              let startedAt = seconds("started_at"),
              let updatedAt = seconds("updated_at"),
              let holders = fields["holders"].flatMap({ Int($0) }),
              let lock = fields["lock"].flatMap({ LockState(rawValue: $0) })
        else { return nil }
        var wakelock: KernelWakelock?
        if let name = fields["wakelock"], let directory = fields["wakelock_directory"] {
            wakelock = KernelWakelock(name: name, directory: directory)
        }
        var command: ProcessIdentity?
        if let pid = fields["command_pid"].flatMap({ Int32($0) }), pid > 1,
           let start = fields["command_start"].flatMap({ UInt64($0) }) {
            command = ProcessIdentity(pid: pid, startTime: start)
        }
        self.init(runID: runID, reason: reason, pid: pid, startedAt: startedAt, updatedAt: updatedAt,
                  holders: holders, lease: seconds("lease"),
                  leaseExpiresAt: seconds("lease_expires_at"), lock: lock, wakelock: wakelock,
                  command: command, pidStart: fields["pid_start"].flatMap { UInt64($0) })
    }

    /// Whether the telwatch that wrote the record still runs: the same pid with the same start
    /// time (a pid alone may have been reused). A record without a start time can only be
    /// judged by its pid.
    public var holderIsRunning: Bool {
        guard let pidStart else { return ProcessIdentity.of(pid) != nil }
        return ProcessIdentity(pid: pid, startTime: pidStart).isRunning
    }
}
