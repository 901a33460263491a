import Glibc
import Loop

/// Runs the hooks of an event, entirely through the loop (a pidfd and a timerfd per running
/// hook), so event processing never waits for a hook. Hooks that share an ordering key run one
/// after another, in the order their events arrived; different keys run side by side, at most
/// `maxRunning` at once (keys wait for a slot in the order they became ready). Everything is
/// bounded: an older waiting hook of a coalesced event is replaced by the newer one, and past
/// `maxQueued` waiting hooks a new one is dropped and reported (`.dropped`).
/// Dropping the runner kills every hook still running (its whole process group) and reaps it.
public final class HookRunner {
    /// Changes apply to hooks that start after them (a reloaded configuration).
    public var settings: HookSettings
    /// Every finished invocation, successful or not.
    private let onOutcome: (HookOutcome) -> Void

    private struct Invocation {
        var event: String
        var key: HookKey
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
    private var queues: [HookKey: [Invocation]] = [:]
    private var running: [HookKey: Running] = [:]
    /// Keys with a hook ready to start, waiting for a slot, oldest first; each key once.
    private var readyKeys: [HookKey] = []
    private var idleWaiters: [() -> Void] = []
    /// Hooks waiting in `queues`.
    public private(set) var queuedCount = 0
    /// Waiting hooks replaced by a newer occurrence of their event, since the start.
    public private(set) var coalescedCount = 0
    /// The most hooks that ever ran at once.
    public private(set) var peakRunning = 0

    /// `onOutcome`: every finished invocation, successful or not.
    public init(loop: EventLoop, settings: HookSettings, onOutcome: @escaping (HookOutcome) -> Void = { _ in }) {
        self.loop = loop
        self.settings = settings
        self.onOutcome = onOutcome
    }

    /// Whether any hook can exist at all (a directory or a configured command): without, an event
    /// needs no environment built for it.
    public var mayHaveHooks: Bool { settings.directory != nil || !settings.commands.isEmpty }

    /// No hook queued or running.
    public var isIdle: Bool { running.isEmpty && queues.isEmpty }

    /// Hooks running now.
    public var runningCount: Int { running.count }

    /// The argv of every hook for `event`, in the order they run.
    public func hooks(for event: String) -> [[String]] {
        var out: [[String]] = []
        if let directory = settings.directory {
            out = HookRunner.files(in: directory, for: event).filter(\.isExecutable).map { [$0.path] }
        }
        out += (settings.commands[event] ?? []).filter { !$0.isEmpty }
        return out
    }

    /// A file of a hooks directory that stands where a hook of an event belongs: the runner runs
    /// it when it is an executable regular file (`telwatch doctor` says which are not).
    public struct HookFile: Equatable, Sendable {
        public let path: String
        public let isExecutable: Bool
    }

    /// The files where the hooks of `event` belong, in the order they run: `directory/EVENT`,
    /// then `directory/EVENT.d/*` in byte order, skipping names that start with `.` or end with
    /// `~`. Nothing else in the directory (a README, say) is ever a hook.
    public static func files(in directory: String, for event: String) -> [HookFile] {
        guard isPlainName(event) else { return [] }
        var out: [HookFile] = []
        let single = directory + "/" + event
        if exists(single) { out.append(HookFile(path: single, isExecutable: isExecutableFile(single))) }
        let folder = directory + "/" + event + ".d"
        for name in entries(of: folder) where !name.hasPrefix(".") && !name.hasSuffix("~") {
            let path = folder + "/" + name
            out.append(HookFile(path: path, isExecutable: isExecutableFile(path)))
        }
        return out
    }

    /// Queues every hook of `event` under `key`, with `TELWATCH_EVENT` and `variables` as its
    /// environment. Returns how many hooks were queued.
    @discardableResult
    public func run(event: String, key: HookKey, variables: [(name: String, value: String)]) -> Int {
        run(hooks(for: event), event: event, key: key, variables: variables)
    }

    /// Queues `commands` (argvs its owner names, such as a screening rule's command, rather than
    /// the event's configured hooks) as hooks of `event`: run, bounded and reported as they are.
    @discardableResult
    public func run(_ commands: [[String]], event: String, key: HookKey, variables: [(name: String, value: String)]) -> Int {
        let commands = commands.filter { !$0.isEmpty }
        guard !commands.isEmpty else { return 0 }
        let environment = ChildEnvironment.make(
            base: settings.baseEnvironment, variables: [("TELWATCH_EVENT", event)] + variables)
        var queue = queues[key] ?? []
        if settings.coalescedEvents.contains(event) {
            let before = queue.count
            queue.removeAll { $0.event == event }
            coalescedCount += before - queue.count
            queuedCount -= before - queue.count
        }
        var queued = 0
        for command in commands {
            let invocation = Invocation(event: event, key: key, command: command, environment: environment)
            guard queuedCount < settings.maxQueued else {
                report(invocation, .dropped(waiting: queuedCount))
                continue
            }
            queue.append(invocation)
            queuedCount += 1
            queued += 1
        }
        queues[key] = queue.isEmpty ? nil : queue
        makeReady(key)
        startWaiting()
        return queued
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
        readyKeys.removeAll()
        queuedCount = 0
        for invocation in dropped { report(invocation, .cancelled) }
        for hook in running.values { hook.child.kill() }
        notifyIfIdle()
    }

    /// Puts `key` in line for a slot if its next hook can start once there is one.
    private func makeReady(_ key: HookKey) {
        guard running[key] == nil, queues[key] != nil, !readyKeys.contains(key) else { return }
        readyKeys.append(key)
    }

    /// Starts waiting hooks while there are free slots, oldest ready key first.
    private func startWaiting() {
        while running.count < settings.maxRunning, !readyKeys.isEmpty {
            let key = readyKeys.removeFirst()
            guard running[key] == nil, var queue = queues[key], !queue.isEmpty else { continue }
            let invocation = queue.removeFirst()
            queues[key] = queue.isEmpty ? nil : queue
            queuedCount -= 1
            start(invocation)
            // A hook that could not start leaves its key free for the next one.
            if running[key] == nil { makeReady(key) }
        }
        notifyIfIdle()
    }

    private func report(_ invocation: Invocation, _ result: HookResult) {
        onOutcome(HookOutcome(event: invocation.event, key: invocation.key, command: invocation.command,
                              pid: nil, startedAt: wallClockNow(), duration: 0, result: result))
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
            peakRunning = max(peakRunning, running.count)
        } catch {
            onOutcome(HookOutcome(event: invocation.event, key: invocation.key, command: invocation.command,
                                  pid: nil, startedAt: started, duration: 0, result: .failedToStart("\(error)")))
        }
    }

    private func finished(_ key: HookKey, _ status: ChildExit) {
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
        makeReady(key)
        startWaiting()
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

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
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
