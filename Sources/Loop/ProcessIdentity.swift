import Glibc

/// A process as the kernel knows it: its pid and when it started (clock ticks since boot, field 22
/// of `/proc/PID/stat`). A pid alone can be reused by an unrelated process; the pair cannot, so a
/// recorded pair is safe to signal later.
public struct ProcessIdentity: Equatable, Sendable {
    public var pid: pid_t
    public var startTime: UInt64

    public init(pid: pid_t, startTime: UInt64) {
        self.pid = pid
        self.startTime = startTime
    }

    /// The identity of `pid` now, or nil when no such process is visible.
    public static func of(_ pid: pid_t) -> ProcessIdentity? {
        guard pid > 0, let text = try? SmallFile.text("/proc/\(pid)/stat", limit: 4096) else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces or ')': fields after it
        // start at the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); starttime is field 22.
        guard fields.count > 19, let start = UInt64(fields[19]) else { return nil }
        return ProcessIdentity(pid: pid, startTime: start)
    }

    /// Whether this very process is still there (not another that got the pid since).
    public var isRunning: Bool { ProcessIdentity.of(pid) == self }
}
