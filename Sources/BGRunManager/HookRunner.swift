import DBus
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

    public init(directory: String? = nil, commands: [String: [[String]]] = [:], timeout: Double = 30,
                killGrace: Double = 2, stdout: Subprocess.Output = .inherit, stderr: Subprocess.Output = .inherit,
                baseEnvironment: [String] = Subprocess.currentEnvironment()) {
        self.directory = directory
        self.commands = commands
        self.timeout = timeout
        self.killGrace = killGrace
        self.stdout = stdout
        self.stderr = stderr
        self.baseEnvironment = baseEnvironment
    }
}

/// How one hook invocation ended.
public enum HookResult: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case killed(signal: Int32)
    /// Still running at the timeout: stopped; `status` is how it finally ended.
    case timedOut(ChildExit)
    case failedToStart(String)
    /// Never started: telwatch was shutting down and out of time.
    case cancelled

    public var isSuccess: Bool { self == .exited(0) }

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .killed(let signal): return "killed by signal \(signal)"
        case .timedOut(let status): return "timed out and was stopped (\(status))"
        case .failedToStart(let why): return "could not start: \(why)"
        case .cancelled: return "cancelled at shutdown"
        }
    }
}

public struct HookOutcome: Sendable {
    public var event: String
    /// The ordering key it ran under (a call id, or "run").
    public var key: String
    public var command: [String]
    public var pid: Int32?
    /// Wall-clock start and how long it ran.
    public var startedAt: Double
    public var duration: Double
    public var result: HookResult
}

/// Runs the hooks of an event, entirely through the loop (a pidfd and a timerfd per running
/// hook), so event processing never waits for a hook. Hooks that share an ordering key run one
/// after another, in the order their events arrived; different keys run side by side.
/// Dropping the runner kills every hook still running (its whole process group) and reaps it.
public final class HookRunner {
    public let settings: HookSettings
    /// Every finished invocation, successful or not.
    public var onOutcome: (HookOutcome) -> Void = { _ in }

    private struct Invocation {
        var event: String
        var key: String
        var command: [String]
        var environment: [String]
    }

    private final class Running {
        let invocation: Invocation
        let child: ProcessGroupChild
        let startedAt: Double
        let startedMonotonic: Double
        var timeoutTimer: TimerSource?
        var timedOut = false

        init(invocation: Invocation, child: ProcessGroupChild) {
            self.invocation = invocation
            self.child = child
            startedAt = wallClockNow()
            startedMonotonic = monotonicNow()
        }
    }

    private let loop: EventLoop
    private var queues: [String: [Invocation]] = [:]
    private var running: [String: Running] = [:]
    private var idleWaiters: [() -> Void] = []

    public init(loop: EventLoop, settings: HookSettings) {
        self.loop = loop
        self.settings = settings
    }

    /// No hook queued or running.
    public var isIdle: Bool { running.isEmpty && queues.isEmpty }

    /// The argv of every hook for `event`, in the order they run.
    public func hooks(for event: String) -> [[String]] {
        var out: [[String]] = []
        if let directory = settings.directory, HookRunner.isPlainName(event) {
            let single = directory + "/" + event
            if HookRunner.isExecutableFile(single) { out.append([single]) }
            let folder = directory + "/" + event + ".d"
            for name in HookRunner.entries(of: folder) where !name.hasPrefix(".") && !name.hasSuffix("~") {
                let path = folder + "/" + name
                if HookRunner.isExecutableFile(path) { out.append([path]) }
            }
        }
        out += (settings.commands[event] ?? []).filter { !$0.isEmpty }
        return out
    }

    /// Queues every hook of `event` under `key`, with `TELWATCH_EVENT` and `variables` as its
    /// environment. Returns how many hooks were queued.
    @discardableResult
    public func run(event: String, key: String, variables: [(name: String, value: String)]) -> Int {
        let commands = hooks(for: event)
        guard !commands.isEmpty else { return 0 }
        let environment = ChildEnvironment.make(
            base: settings.baseEnvironment, variables: [("TELWATCH_EVENT", event)] + variables)
        queues[key, default: []] += commands.map {
            Invocation(event: event, key: key, command: $0, environment: environment)
        }
        startNext(key)
        return commands.count
    }

    /// Calls `done` once no hook is queued or running (at once if none is).
    public func whenIdle(_ done: @escaping () -> Void) {
        if isIdle { done() } else { idleWaiters.append(done) }
    }

    /// Shutdown out of time: SIGKILL every running hook's group, drop what is queued (each
    /// reported as `cancelled`). The killed hooks are reported as they are reaped.
    public func abort() {
        let dropped = queues.values.flatMap { $0 }
        queues.removeAll()
        for invocation in dropped {
            onOutcome(HookOutcome(event: invocation.event, key: invocation.key, command: invocation.command,
                                  pid: nil, startedAt: wallClockNow(), duration: 0, result: .cancelled))
        }
        for hook in running.values { hook.child.kill() }
        notifyIfIdle()
    }

    private func startNext(_ key: String) {
        while running[key] == nil, var queue = queues[key], !queue.isEmpty {
            let invocation = queue.removeFirst()
            queues[key] = queue.isEmpty ? nil : queue
            start(invocation)
        }
        notifyIfIdle()
    }

    private func start(_ invocation: Invocation) {
        let started = wallClockNow()
        do {
            let child = try ProcessGroupChild(
                loop: loop, arguments: invocation.command, environment: invocation.environment,
                stdout: settings.stdout, stderr: settings.stderr)
            child.onExit = { [weak self] status in self?.finished(invocation.key, status) }
            let hook = Running(invocation: invocation, child: child)
            hook.timeoutTimer = try loop.timer { [weak self, weak hook] in
                guard let self, let hook else { return }
                hook.timedOut = true
                hook.timeoutTimer = nil
                hook.child.stop(grace: self.settings.killGrace)
            }
            hook.timeoutTimer?.schedule(after: settings.timeout)
            running[invocation.key] = hook
        } catch {
            onOutcome(HookOutcome(event: invocation.event, key: invocation.key, command: invocation.command,
                                  pid: nil, startedAt: started, duration: 0, result: .failedToStart("\(error)")))
        }
    }

    private func finished(_ key: String, _ status: ChildExit) {
        guard let hook = running.removeValue(forKey: key) else { return }
        hook.timeoutTimer = nil
        let result: HookResult
        if hook.timedOut {
            result = .timedOut(status)
        } else {
            switch status {
            case .exited(let code): result = .exited(code)
            case .signaled(let signal): result = .killed(signal: signal)
            }
        }
        let invocation = hook.invocation
        onOutcome(HookOutcome(event: invocation.event, key: key, command: invocation.command, pid: hook.child.pid,
                              startedAt: hook.startedAt, duration: monotonicNow() - hook.startedMonotonic,
                              result: result))
        startNext(key)
    }

    private func notifyIfIdle() {
        guard isIdle, !idleWaiters.isEmpty else { return }
        let waiters = idleWaiters
        idleWaiters.removeAll()
        for waiter in waiters { waiter() }
    }

    // MARK: Files

    /// An event name is used as a file name: nothing that could climb out of the directory.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.contains("/")
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    /// Names in a directory, in byte order (not locale order: the same on every machine).
    private static func entries(of directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }
}
