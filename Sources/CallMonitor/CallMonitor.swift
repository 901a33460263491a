// The backends, one tracker, and the closures the command listens on.

import DBus
import Loop

/// Follows the calls of the chosen stacks: every backend event goes through one `CallTracker`
/// (stamped with `clock`), whose events reach `onEvent` in order; notices reach `onNotice`,
/// with repeated rejected and malformed ones rate-limited. Everything runs on the connection's
/// loop thread; nothing here wakes the process while no message arrives.
public final class CallMonitor {
    public let selection: BackendSelection
    private let connection: Connection
    private let clock: () -> Double
    let noticeClock: () -> Double
    private let onEvents: ([TrackerEvent], Double) -> Void
    private let onNotice: (BackendNotice) -> Void
    private var tracker = CallTracker()
    private var limiter = NoticeLimiter()
    /// Tones heard, paced per call (made at `start()`, on the connection's loop).
    private var toneGate: ToneGate?
    /// Tones the far end pressed on a live call (ModemManager's `DtmfReceived`), at most one event
    /// per call per `ToneGate.spacing`, with the moment the first of them was heard.
    public var onTones: ((HeardTones, Double) -> Void)?
    /// Whether a timer is armed for tones that wait (only while some do).
    var tonesTimerArmed: Bool { toneGate?.isArmed ?? false }
    private(set) var backends: [CallBackend] = []
    /// Acts asked of the stacks and not answered yet (`CallMonitor.act`, `dial`).
    let actsInFlight = ActsInFlight()
    /// Each modem's emergency numbers as its stack lists them: no act dials them.
    var listedEmergencyNumbers: [ModemKey: Set<String>] = [:]
    public private(set) var isRunning = false
    /// The calls an earlier telwatch left live (`RememberedCall`), for `start()`: a call each
    /// stack's first sync finds still live goes on under its id; after that sync, no other.
    private var remembered: [RememberedCall]

    public convenience init(
        connection: Connection, backends: BackendSelection, clock: @escaping () -> Double = wallClockNow,
        remembered: [RememberedCall] = [],
        onEvent: @escaping (TrackerEvent) -> Void, onNotice: @escaping (BackendNotice) -> Void
    ) {
        self.init(connection: connection, backends: backends, clock: clock, noticeClock: monotonicNow,
                  remembered: remembered,
                  onEvents: { events, _ in for event in events { onEvent(event) } }, onNotice: onNotice)
    }

    /// Hands over the tracker's events one batch per backend event: what one change of one call
    /// caused (a `disconnected` with its `missed` and `idle`), which `TelManager.handle` needs whole,
    /// with the one moment the tracker stamped them (a first sight's `first_seen` is that moment:
    /// the clock is read once per event).
    public convenience init(
        connection: Connection, backends: BackendSelection, clock: @escaping () -> Double = wallClockNow,
        remembered: [RememberedCall] = [],
        onEvents: @escaping ([TrackerEvent], Double) -> Void, onNotice: @escaping (BackendNotice) -> Void
    ) {
        self.init(connection: connection, backends: backends, clock: clock, noticeClock: monotonicNow,
                  remembered: remembered, onEvents: onEvents, onNotice: onNotice)
    }

    /// `noticeClock` (monotonic seconds) paces the rate limit of notices.
    init(connection: Connection, backends: BackendSelection, clock: @escaping () -> Double,
         noticeClock: @escaping () -> Double, remembered: [RememberedCall] = [],
         onEvents: @escaping ([TrackerEvent], Double) -> Void, onNotice: @escaping (BackendNotice) -> Void) {
        self.connection = connection
        selection = backends
        self.clock = clock
        self.noticeClock = noticeClock
        self.remembered = remembered
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
        tracker.remember(remembered)
        remembered = []
        limiter = NoticeLimiter()
        listedEmergencyNumbers = [:]
        toneGate = ToneGate(loop: connection.loop) { [weak self] tones, time in self?.onTones?(tones, time) }
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
        toneGate?.flush()
        toneGate = nil
        actsInFlight.stackGone(nil)
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
        let now = clock()
        if case .tonesHeard(let key, let tones, let dropped) = event {
            // Only a call the tracker follows: a signal on any other path tells nothing.
            guard let call = tracker.call(key) else { return }
            toneGate?.heard(tones, dropped: dropped, on: call, at: now)
            return
        }
        let outputs = tracker.apply(event, at: now)
        guard !outputs.isEmpty else { return }
        // Tones a call still holds were heard before it ended: they are told first. Most events
        // find the gate empty, and skip copying their calls out to ask.
        if let toneGate, !toneGate.isEmpty {
            for case .transition(let call, _) in outputs where call.state == .disconnected { toneGate.callEnds(call.id) }
        }
        onEvents(outputs, now)
    }

    private func handle(_ notice: BackendNotice) {
        guard isRunning else { return }
        var notice = notice
        // Sent before the tracker ends the backend's calls: these are the ones that end.
        switch notice {
        case .serviceVanished(let kind, _):
            notice = .serviceVanished(kind, liveCalls: tracker.liveCalls.filter { $0.key.backend == kind }.count)
            listedEmergencyNumbers = listedEmergencyNumbers.filter { $0.key.backend != kind }
            actsInFlight.stackGone(kind)
        case .emergencyNumbers(let kind, let modem, let numbers):
            listedEmergencyNumbers[ModemKey(backend: kind, path: modem)] = Set(numbers)
        case .synced(let kind, _, _), .serviceAbsent(let kind), .syncRefused(let kind, _), .syncFailed(let kind, _):
            tracker.forgetRemembered(of: kind)
        default:
            break
        }
        for output in limiter.admit(notice, at: noticeClock()) { onNotice(output) }
    }
}
