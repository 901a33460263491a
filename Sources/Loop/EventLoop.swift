import CLoop
import Glibc

/// Seconds on the monotonic clock.
public func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Seconds since the epoch, for timestamps people read.
public func wallClockNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The wall-clock moment of the boot: now less the time since it (`CLOCK_BOOTTIME` counts
/// suspended time too). Nothing a stack keeps outlives it: no call first seen before is live.
public func bootWallClock() -> Double {
    var since = timespec()
    guard clock_gettime(CLOCK_BOOTTIME, &since) == 0 else { return 0 }
    return wallClockNow() - (Double(since.tv_sec) + Double(since.tv_nsec) / 1e9)
}

public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: EPOLLIN.rawValue)
    public static let writable = IOEvents(rawValue: EPOLLOUT.rawValue)
    public static let error = IOEvents(rawValue: EPOLLERR.rawValue)
    public static let hangup = IOEvents(rawValue: EPOLLHUP.rawValue)
}

/// Where a hook's `prepare` runs in the end of a turn, declared by each hook and kept by the loop
/// whatever order the hooks were added in (docs/ARCHITECTURE.md, "A turn"): first the buses'
/// messages are dispatched (the turn's events happen), then the events leave the process, the
/// terminal's lines first, then what is kept on disk is written: no line waits for a disk write.
public enum TurnPhase: Int, Comparable, Sendable, CaseIterable {
    /// The D-Bus connections dispatch what they received: handlers run, events flow through the
    /// pipeline, the sinks queue their output (D-Bus messages the sinks sent leave as their
    /// socket is writable, in the wait that follows).
    case dispatch
    /// The event stream's lines are written (stdout).
    case print
    /// MQTT: the outbox's transaction, then the publications.
    case publish
    /// Written to disk: the call history's transaction (and its WAL sync at a run's end), the
    /// run record.
    case persist

    public static func < (lhs: TurnPhase, rhs: TurnPhase) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Something that must run around every wait of the loop: a D-Bus connection folds its
/// queued messages and its own timeouts into the loop this way.
public protocol LoopHook: AnyObject {
    /// Where this hook's `prepare` runs among the others.
    var phase: TurnPhase { get }
    /// Runs before the loop waits, in phase order; returns the monotonic deadline by which
    /// `afterWait` must run, if any.
    func prepare() -> Double?
    /// Runs after every wait.
    func afterWait(now: Double)
}

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

    fileprivate func modify(_ source: IOSource, events: IOEvents) {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = source.token
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, source.fd, &event)
    }

    fileprivate func remove(_ source: IOSource) {
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

/// A file descriptor in the loop's epoll set.
public final class IOSource {
    private weak var loop: EventLoop?
    let fd: Int32
    let token: UInt64
    let handler: (IOEvents) -> Void
    public private(set) var events: IOEvents

    fileprivate init(loop: EventLoop, fd: Int32, token: UInt64, events: IOEvents, handler: @escaping (IOEvents) -> Void) {
        self.loop = loop
        self.fd = fd
        self.token = token
        self.events = events
        self.handler = handler
    }

    public func setEvents(_ newEvents: IOEvents) {
        guard newEvents != events else { return }
        events = newEvents
        loop?.modify(self, events: newEvents)
    }

    /// Removes the descriptor from the loop; safe to call twice.
    public func cancel() {
        loop?.remove(self)
        loop = nil
    }

    fileprivate func detach() { loop = nil }
}

/// A timer on its own timerfd. Disarmed timers cost nothing.
public final class TimerSource {
    private let fd: Int32
    private var source: IOSource?
    private let handler: () -> Void
    public private(set) var isArmed = false

    fileprivate init(loop: EventLoop, handler: @escaping () -> Void) throws {
        fd = cloop_timerfd_create()
        guard fd >= 0 else { throw SystemError.last("timerfd_create") }
        self.handler = handler
        source = try loop.watch(fd: fd, events: .readable) { [unowned self] _ in self.fire() }
    }

    deinit {
        source?.cancel()
        close(fd)
    }

    /// Arms the timer to fire after `seconds`, then every `interval` seconds if given.
    public func schedule(after seconds: Double, repeating interval: Double? = nil) {
        var spec = itimerspec()
        spec.it_value = TimerSource.timespec(max(seconds, 0.000_001))
        if let interval { spec.it_interval = TimerSource.timespec(max(interval, 0.000_001)) }
        timerfd_settime(fd, 0, &spec, nil)
        isArmed = true
    }

    public func cancel() {
        var spec = itimerspec()
        timerfd_settime(fd, 0, &spec, nil)
        isArmed = false
    }

    /// Time left until the next expiry, or nil when disarmed.
    public var remaining: Double? {
        guard isArmed else { return nil }
        var spec = itimerspec()
        timerfd_gettime(fd, &spec)
        return Double(spec.it_value.tv_sec) + Double(spec.it_value.tv_nsec) / 1e9
    }

    private func fire() {
        var expirations: UInt64 = 0
        guard read(fd, &expirations, 8) == 8 else { return }
        var spec = itimerspec()
        timerfd_gettime(fd, &spec)
        if spec.it_interval.tv_sec == 0 && spec.it_interval.tv_nsec == 0 { isArmed = false }
        handler()
    }

    private static func timespec(_ seconds: Double) -> Glibc.timespec {
        // Ten years is "never" for a timer; anything larger (or NaN) must not trap the loop.
        let seconds = seconds.isFinite ? min(seconds, 315_360_000) : 315_360_000
        let whole = seconds.rounded(.down)
        return Glibc.timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
    }
}

/// Signals delivered on a signalfd, on the loop thread.
public final class SignalSource {
    private let fd: Int32
    private var source: IOSource?
    private var mask = sigset_t()

    fileprivate init(loop: EventLoop, signals: [Int32], handler: @escaping (Int32) -> Void) throws {
        sigemptyset(&mask)
        for number in signals { sigaddset(&mask, number) }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        fd = cloop_signalfd(&mask)
        guard fd >= 0 else { throw SystemError.last("signalfd") }
        let fd = fd
        source = try loop.watch(fd: fd, events: .readable) { _ in
            var info = signalfd_siginfo()
            while read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                handler(Int32(info.ssi_signo))
            }
        }
    }

    /// Stops listening and unblocks the signals again.
    public func cancel() {
        guard let source else { return }
        source.cancel()
        self.source = nil
        close(fd)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    }

    deinit { cancel() }
}

/// How a child process ended.
public enum ChildExit: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    public init(waitStatus status: Int32) {
        if status & 0x7f == 0 { self = .exited((status >> 8) & 0xff) } else { self = .signaled(status & 0x7f) }
    }

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }
}

/// A child process watched through its pidfd; it is reaped (by its exact pid) before the handler runs.
public final class ChildSource {
    public let pid: pid_t
    private let pidFD: Int32
    private var source: IOSource?
    public private(set) var exit: ChildExit?

    fileprivate init(loop: EventLoop, pid: pid_t, handler: @escaping (ChildExit) -> Void) throws {
        self.pid = pid
        pidFD = cloop_pidfd_open(pid)
        guard pidFD >= 0 else { throw SystemError.last("pidfd_open") }
        source = try loop.watch(fd: pidFD, events: .readable) { [unowned self] _ in
            guard let exit = self.reap() else { return }
            handler(exit)
        }
    }

    /// Sends a signal through the pidfd, so a recycled pid can never be hit.
    @discardableResult
    public func send(_ signal: Int32) -> Bool {
        exit == nil && cloop_pidfd_send_signal(pidFD, signal) == 0
    }

    /// Sends a signal to the child's whole process group (children are spawned as group leaders).
    public func sendToGroup(_ signal: Int32) {
        guard exit == nil else { return }
        _ = kill(-pid, signal)
    }

    private func reap() -> ChildExit? {
        guard exit == nil else { return nil }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid else { return nil }
        let ended = ChildExit(waitStatus: status)
        exit = ended
        source?.cancel()
        source = nil
        return ended
    }

    deinit {
        source?.cancel()
        close(pidFD)
    }
}
