import CLoop
import Glibc

/// The daemon's single event loop (sd-event style): one epoll set over file descriptors,
/// timerfds, a signalfd and pidfds. With nothing scheduled it blocks without a timeout,
/// so an idle process makes no wakeups at all. Not thread-safe: use it from one thread.
public final class EventLoop {
    private let epollFD: Int32
    private var sources: [UInt64: IOSource] = [:]
    private var nextToken: UInt64 = 1
    private var hooks: [WeakHook] = []
    private var deferred: [() -> Void] = []
    private var stopRequested = false
    private let readyEvents = UnsafeMutablePointer<epoll_event>.allocate(capacity: 64)
    private let readyCapacity: Int32 = 64

    /// How many times the loop returned from waiting (for tests and benchmarks).
    public private(set) var wakeups: UInt64 = 0

    public init() throws {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SystemError.last("epoll_create1") }
    }

    deinit {
        for source in sources.values { source.detach() }
        close(epollFD)
        readyEvents.deallocate()
    }

    // MARK: Sources

    /// Calls `handler` on the loop thread whenever `fd` is ready for `events`.
    /// The loop does not own `fd`; cancel the source before closing it.
    public func watch(fd: Int32, events: IOEvents, _ handler: @escaping (IOEvents) -> Void) throws -> IOSource {
        let token = nextToken
        nextToken += 1
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw SystemError.last("epoll_ctl")
        }
        let source = IOSource(loop: self, fd: fd, token: token, events: events, handler: handler)
        sources[token] = source
        return source
    }

    func modify(_ source: IOSource, events: IOEvents) {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = source.token
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, source.fd, &event)
    }

    func remove(_ source: IOSource) {
        guard sources.removeValue(forKey: source.token) != nil else { return }
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, source.fd, &event)
    }

    /// A one-shot or repeating timer on a timerfd. It is armed only while scheduled.
    public func timer(_ handler: @escaping () -> Void) throws -> TimerSource {
        try TimerSource(loop: self, handler: handler)
    }

    /// Delivers the given signals through a signalfd instead of asynchronous handlers.
    /// They are blocked for the calling thread (and so for threads it creates later).
    public func signals(_ numbers: [Int32], _ handler: @escaping (Int32) -> Void) throws -> SignalSource {
        try SignalSource(loop: self, signals: numbers, handler: handler)
    }

    /// Watches a child process through a pidfd; `handler` runs once, after the child was reaped.
    public func child(_ pid: pid_t, _ handler: @escaping (ChildExit) -> Void) throws -> ChildSource {
        try ChildSource(loop: self, pid: pid, handler: handler)
    }

    /// Runs `work` on the loop thread before the next wait, outside whatever handler is running now.
    public func soon(_ work: @escaping () -> Void) {
        deferred.append(work)
    }

    /// Adds a hook after those of its phase and before those of later phases.
    public func addHook(_ hook: LoopHook) {
        let index = hooks.firstIndex { ($0.hook?.phase ?? .dispatch) > hook.phase } ?? hooks.endIndex
        hooks.insert(WeakHook(hook), at: index)
    }

    public func removeHook(_ hook: LoopHook) { hooks.removeAll { $0.hook == nil || $0.hook === hook } }

    // MARK: Running

    /// Runs until `stop()`.
    public func run() {
        stopRequested = false
        while !stopRequested { iterate(maxWait: nil) }
    }

    /// Ends `run()` once the current handler returns.
    public func stop() { stopRequested = true }

    /// Runs until `condition` holds or `timeout` seconds pass; returns whether the condition held.
    /// For tests and one-shot commands: every wait stays bounded.
    @discardableResult
    public func run(until condition: () -> Bool, timeout: Double) -> Bool {
        withoutActuallyEscaping(condition) { condition in runBounded(until: condition, timeout: timeout) }
    }

    private func runBounded(until condition: @escaping () -> Bool, timeout: Double) -> Bool {
        let deadline = monotonicNow() + timeout
        stopRequested = false
        while !condition() {
            let left = deadline - monotonicNow()
            if left <= 0 || stopRequested { return condition() }
            iterate(maxWait: left, unless: condition)
        }
        return true
    }

    /// One turn: deferred work, hooks, one wait, the ready handlers. The wait is skipped when
    /// `unless` already holds after the hooks ran (they dispatch queued messages).
    public func iterate(maxWait: Double?, unless satisfied: (() -> Bool)? = nil) {
        runDeferred()
        var deadline: Double? = nil
        for entry in hooks {
            guard let hook = entry.hook, let due = hook.prepare() else { continue }
            deadline = min(deadline ?? due, due)
        }
        // A handler run by a hook may have asked to stop or queued more work: do not block then.
        var timeoutMS: Int32 = -1
        if stopRequested || !deferred.isEmpty || satisfied?() == true {
            timeoutMS = 0
        } else {
            let now = monotonicNow()
            var wait = maxWait
            if let deadline { wait = min(wait ?? (deadline - now), deadline - now) }
            if let wait { timeoutMS = Int32(max(0, min((wait * 1000).rounded(.up), 86_400_000))) }
        }

        let count = epoll_wait(epollFD, readyEvents, readyCapacity, timeoutMS)
        if timeoutMS != 0 { wakeups += 1 }
        for index in 0..<Int(max(count, 0)) {
            let event = readyEvents[index]
            // A handler earlier in this batch may have removed this source.
            guard let source = sources[event.data.u64] else { continue }
            source.handler(IOEvents(rawValue: event.events))
        }
        let now = monotonicNow()
        for entry in hooks { entry.hook?.afterWait(now: now) }
        hooks.removeAll { $0.hook == nil }
    }

    private func runDeferred() {
        while !deferred.isEmpty {
            let batch = deferred
            deferred.removeAll()
            for work in batch { work() }
        }
    }
}

private struct WeakHook {
    weak var hook: LoopHook?
    init(_ hook: LoopHook) { self.hook = hook }
}

