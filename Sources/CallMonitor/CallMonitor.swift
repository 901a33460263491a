// The backends, one tracker, and the closures the command listens on.

import DBus
import Loop

/// Which stacks to follow.
public enum BackendSelection: String, Sendable, CaseIterable {
    /// Both, each as soon as it is running (and again after it restarts).
    case auto
    case modemManager = "modemmanager"
    case ofono

    public var kinds: [BackendKind] {
        switch self {
        case .auto: return [.modemManager, .ofono]
        case .modemManager: return [.modemManager]
        case .ofono: return [.ofono]
        }
    }
}

/// Follows the calls of the chosen stacks: every backend event goes through one `CallTracker`
/// (stamped with `clock`), whose events reach `onEvent` in order; notices reach `onNotice`,
/// with repeated rejected and malformed ones rate-limited. Everything runs on the connection's
/// loop thread; nothing here wakes the process while no message arrives.
public final class CallMonitor {
    public let selection: BackendSelection
    private let connection: Connection
    private let clock: () -> Double
    private let noticeClock: () -> Double
    private let onEvents: ([TrackerEvent]) -> Void
    private let onNotice: (BackendNotice) -> Void
    private var tracker = CallTracker()
    private var limiter = NoticeLimiter()
    private var backends: [CallBackend] = []
    public private(set) var isRunning = false

    public convenience init(
        connection: Connection, backends: BackendSelection, clock: @escaping () -> Double = wallClockNow,
        onEvent: @escaping (TrackerEvent) -> Void, onNotice: @escaping (BackendNotice) -> Void
    ) {
        self.init(connection: connection, backends: backends, clock: clock, noticeClock: monotonicNow,
                  onEvents: { events in for event in events { onEvent(event) } }, onNotice: onNotice)
    }

    /// Hands over the tracker's events one batch per backend event: what one change of one call
    /// caused (a `disconnected` with its `missed` and `idle`), which `TelManager.handle` needs whole.
    public convenience init(
        connection: Connection, backends: BackendSelection, clock: @escaping () -> Double = wallClockNow,
        onEvents: @escaping ([TrackerEvent]) -> Void, onNotice: @escaping (BackendNotice) -> Void
    ) {
        self.init(connection: connection, backends: backends, clock: clock, noticeClock: monotonicNow,
                  onEvents: onEvents, onNotice: onNotice)
    }

    /// `noticeClock` (monotonic seconds) paces the rate limit of notices.
    init(connection: Connection, backends: BackendSelection, clock: @escaping () -> Double,
         noticeClock: @escaping () -> Double, onEvents: @escaping ([TrackerEvent]) -> Void,
         onNotice: @escaping (BackendNotice) -> Void) {
        self.connection = connection
        selection = backends
        self.clock = clock
        self.noticeClock = noticeClock
        self.onEvents = onEvents
        self.onNotice = onNotice
    }

    /// Calls live now, in first-seen order.
    public var liveCalls: [CallSnapshot] { tracker.liveCalls }
    public var liveCallCount: Int { tracker.liveCount }

    /// Signals decoded from the stacks' owners since `start()` (for benchmarks).
    public var decodedSignals: UInt64 { backends.reduce(0) { $0 &+ $1.decodedSignals } }

    /// Starts every selected backend. A stack that is not running is waited for.
    public func start() throws {
        guard !isRunning else { return }
        tracker = CallTracker()
        limiter = NoticeLimiter()
        backends = selection.kinds.map(makeBackend)
        isRunning = true
        do {
            for backend in backends { try backend.start() }
        } catch {
            stop()
            throw error
        }
    }

    /// Stops every backend; what is still held back by the rate limit is reported now.
    /// Live calls stay as they were (`liveCalls`); no event is emitted for them.
    public func stop() {
        guard isRunning else { return }
        isRunning = false
        for backend in backends { backend.stop() }
        for notice in limiter.flush() { onNotice(notice) }
    }

    /// The bus connection itself is gone (call this from its `onDisconnect`): no owner can be
    /// followed any more, so every live call ends (`backend-lost`) and the backends stop.
    /// Go on with a new monitor on a new connection.
    public func connectionLost() {
        guard isRunning else { return }
        for backend in backends { handle(.backendLost(backend.kind)) }
        stop()
    }

    /// Reads every stack's calls again after a resume and reconciles them with what was known
    /// before the sleep (`BackendEvent.learnedOnResume`): a call still live in the same state is
    /// not reported again and keeps its id, a call that changed or ended meanwhile gets its
    /// transition (one `disconnected` at most), a call found that was not known is new, and a
    /// ModemManager call found already terminated came and went meanwhile (`disconnected`, then
    /// `missed` when it was incoming). Every such event is flagged `resumed`.
    public func resync() {
        guard isRunning else { return }
        for backend in backends { backend.resync() }
    }

    /// Hangs up a call of a stack followed now (call screening); `done` as `CallBackend.hangUp`.
    public func hangUp(_ key: CallKey, done: @escaping (String?) -> Void) {
        guard isRunning, let backend = backends.first(where: { $0.kind == key.backend }) else {
            return done("\(key.backend.rawValue) is not followed")
        }
        backend.hangUp(key.path, done: done)
    }

    private func makeBackend(_ kind: BackendKind) -> CallBackend {
        let event: (BackendEvent) -> Void = { [weak self] in self?.handle($0) }
        let notice: (BackendNotice) -> Void = { [weak self] in self?.handle($0) }
        switch kind {
        case .modemManager: return ModemManagerBackend(connection: connection, onEvent: event, onNotice: notice)
        case .ofono: return OfonoBackend(connection: connection, onEvent: event, onNotice: notice)
        }
    }

    private func handle(_ event: BackendEvent) {
        guard isRunning else { return }
        let outputs = tracker.apply(event, at: clock())
        if !outputs.isEmpty { onEvents(outputs) }
    }

    private func handle(_ notice: BackendNotice) {
        guard isRunning else { return }
        var notice = notice
        // Sent before the tracker ends the backend's calls: these are the ones that end.
        if case .serviceVanished(let kind, _) = notice {
            notice = .serviceVanished(kind, liveCalls: tracker.liveCalls.filter { $0.key.backend == kind }.count)
        }
        for output in limiter.admit(notice, at: noticeClock()) { onNotice(output) }
    }
}

/// Caps repeated notices from one source: at most `limit` per `window` seconds for each sender
/// of rejected signals (and for each backend's malformed messages, and its unreadable calls),
/// then one summary of how many were held back. It counts on arrival and needs no timer: the summary comes with the next
/// notice after the window closes, or from `flush()`.
struct NoticeLimiter {
    struct Source: Hashable {
        enum Kind: Hashable { case rejected, malformed, unreadable }
        var backend: BackendKind
        var kind: Kind
        /// The rejected signal's sender; nil for the others.
        var sender: String?
    }

    private struct Window {
        var opened: Double
        var shown: Int
        var held: Int
    }

    let limit: Int
    let window: Double
    /// Senders tracked one by one; beyond that they share one window, so a spoofer with many
    /// connections cannot grow memory or the output.
    let maxSources: Int
    static let otherSenders = "(other senders)"
    private var windows: [Source: Window] = [:]

    init(limit: Int = 5, window: Double = 10, maxSources: Int = 16) {
        self.limit = limit
        self.window = window
        self.maxSources = maxSources
    }

    /// The notices to show now for `notice` arriving at `now` (monotonic seconds): summaries of
    /// windows that closed, then the notice itself unless its source is over the limit.
    mutating func admit(_ notice: BackendNotice, at now: Double) -> [BackendNotice] {
        let source: Source
        switch notice {
        case .rejectedSignal(let backend, let sender, _): source = Source(backend: backend, kind: .rejected, sender: sender)
        case .malformed(let backend, _): source = Source(backend: backend, kind: .malformed, sender: nil)
        case .callUnreadable(let backend, _): source = Source(backend: backend, kind: .unreadable, sender: nil)
        default: return [notice]
        }
        var out = closeWindows(at: now)
        var key = source
        // Malformed messages have one source per backend and never overflow.
        if source.sender != nil && windows[key] == nil && windows.count >= maxSources {
            key = Source(backend: source.backend, kind: .rejected, sender: Self.otherSenders)
        }
        var current = windows[key] ?? Window(opened: now, shown: 0, held: 0)
        if current.shown < limit {
            current.shown += 1
            out.append(notice)
        } else {
            current.held += 1
        }
        windows[key] = current
        return out
    }

    /// Summaries of every window still holding notices back; forgets all windows.
    mutating func flush() -> [BackendNotice] {
        closeWindows(at: .infinity)
    }

    private mutating func closeWindows(at now: Double) -> [BackendNotice] {
        var out: [BackendNotice] = []
        let closing = windows.filter { now - $0.value.opened >= window }
            .sorted { ($0.value.opened, $0.key.sender ?? "") < ($1.value.opened, $1.key.sender ?? "") }
        for (source, closed) in closing {
            windows.removeValue(forKey: source)
            guard closed.held > 0 else { continue }
            switch source.kind {
            case .rejected:
                out.append(.rejectedSuppressed(source.backend, sender: source.sender ?? "?", count: closed.held))
            case .malformed:
                out.append(.malformedSuppressed(source.backend, count: closed.held))
            case .unreadable:
                out.append(.unreadableSuppressed(source.backend, count: closed.held))
            }
        }
        return out
    }
}
