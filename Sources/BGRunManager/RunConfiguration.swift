import Glibc
import Loop

/// What a run holds and for how long.
public struct RunConfiguration {
    /// The logind inhibitor every run holds; nil holds none.
    public var lock: InhibitorRequest?
    /// A kernel wakelock every run also holds, where the kernel has them; nil holds none.
    public var wakelock: KernelWakelock?
    /// The user's command for the life of each run (argv, no shell); nil runs none.
    public var command: [String]?
    /// Between SIGTERM and SIGKILL of the run command at run end.
    public var commandGrace: Double
    public var commandStdout: Subprocess.Output
    public var commandStderr: Subprocess.Output
    /// The run command's environment, before `TELWATCH_RUN_*` is added.
    public var commandEnvironment: [String]
    /// A `heartbeat` event this often while a run lives; nil for none. No timer runs while idle.
    public var heartbeat: Double?
    /// A run not renewed by its holders for this long ends itself (`expired`); nil for no lease.
    public var lease: Double?
    /// Where the live run is recorded for crash recovery and `status`; nil records nothing.
    public var stateDirectory: String?
    /// How long `shutdown` waits for the run command and hooks before it kills them.
    public var shutdownTimeout: Double

    public init(lock: InhibitorRequest? = InhibitorRequest(), wakelock: KernelWakelock? = nil,
                command: [String]? = nil, commandGrace: Double = 5, commandStdout: Subprocess.Output = .inherit,
                commandStderr: Subprocess.Output = .inherit,
                commandEnvironment: [String] = Subprocess.currentEnvironment(), heartbeat: Double? = nil,
                lease: Double? = 4 * 3600, stateDirectory: String? = RunStateStore.defaultDirectory(),
                shutdownTimeout: Double = 10) {
        self.lock = lock
        self.wakelock = wakelock
        self.command = command
        self.commandGrace = commandGrace
        self.commandStdout = commandStdout
        self.commandStderr = commandStderr
        self.commandEnvironment = commandEnvironment
        self.heartbeat = heartbeat
        self.lease = lease
        self.stateDirectory = stateDirectory
        self.shutdownTimeout = shutdownTimeout
    }
}
