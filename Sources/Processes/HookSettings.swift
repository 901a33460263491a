import Glibc
import Loop

/// Where hooks come from and how they run.
///
/// For an event named `E`, the hooks are, in this order:
/// 1. `<directory>/E`, if it is an executable file;
/// 2. every executable file in `<directory>/E.d/`, in byte order of their names (`10-log`
///    before `20-notify`), skipping names that start with `.` or end with `~` (editor leftovers);
/// 3. the commands configured for `E` in `commands`, in the order given.
/// Both directory forms exist so that a single hook stays a single file, while packages and
/// users can drop several hooks side by side without editing each other's. The directory is
/// read at every event, so hooks added while telwatch runs take effect at once.
public struct HookSettings {
    /// The hooks directory; nil for configured commands only.
    public var directory: String?
    /// Explicit commands per event name, each an argv (never a shell string).
    public var commands: [String: [[String]]]
    /// A hook still running after this many seconds is stopped (its whole process group).
    public var timeout: Double
    /// Between SIGTERM and SIGKILL of a hook that timed out.
    public var killGrace: Double
    /// Where the hooks' stdout and stderr go.
    public var stdout: Subprocess.Output
    public var stderr: Subprocess.Output
    /// The environment every hook starts from; the event's `TELWATCH_` variables are added.
    public var baseEnvironment: [String]
    /// Events whose newest occurrence replaces an older one still waiting under the same key
    /// (`updated`: only the latest state of a call matters to a hook that has not started yet).
    public var coalescedEvents: Set<String>
    /// Hooks running at once, over every key; the rest wait their turn in arrival order.
    public var maxRunning: Int
    /// Hooks waiting, over every key; beyond it a new hook is dropped and reported.
    public var maxQueued: Int

    public init(directory: String? = nil, commands: [String: [[String]]] = [:], timeout: Double = 30,
                killGrace: Double = 2, stdout: Subprocess.Output = .inherit, stderr: Subprocess.Output = .inherit,
                baseEnvironment: [String] = Subprocess.currentEnvironment(), coalescedEvents: Set<String> = [],
                maxRunning: Int = HookSettings.defaultMaxRunning(), maxQueued: Int = 1024) {
        self.directory = directory
        self.commands = commands
        self.timeout = timeout
        self.killGrace = killGrace
        self.stdout = stdout
        self.stderr = stderr
        self.baseEnvironment = baseEnvironment
        self.coalescedEvents = coalescedEvents
        self.maxRunning = max(1, maxRunning)
        self.maxQueued = max(1, maxQueued)
    }
}

extension HookSettings {
    /// A running hook holds a few descriptors (its pidfd and timeout timerfd, and two more for a
    /// moment while it starts). The cap leaves room, whatever the limit, for what must never fail
    /// for want of one: the bus, the inhibitor lock, the run record, the run command.
    public static func defaultMaxRunning(reserve: Int = 32, perHook: Int = 4, ceiling: Int = 16) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1 }
        let available = Int(clamping: limit.rlim_cur)
        return max(1, min(ceiling, (available - reserve) / perHook))
    }
}
