import Loop

/// Paces the tones heard on each call (docs/modem-stacks.md §14): what one loop turn brings becomes
/// one event, and a call's next event waits until `spacing` has passed since its last one, the
/// tones heard meanwhile gathered into it (at most `HeardTones.limit`, the rest counted as
/// dropped). A flood therefore costs a few events a second and a fixed amount of memory per live
/// call. Its timer is armed only while tones wait; with none waiting it costs nothing.
final class ToneGate {
    /// The least time between two `tones` events of one call: a person presses keys slower.
    static let spacing = 0.2

    private struct Waiting {
        var heard: HeardTones
        /// When the first of them was heard (wall clock): the event's time.
        var heardAt: Double
    }

    private let loop: EventLoop
    private let monotonic: () -> Double
    private let deliver: (HeardTones, Double) -> Void
    /// Tones not told yet, by call id, in the order the calls were first heard.
    private var waiting: [(id: String, tones: Waiting)] = []
    /// When each live call's last event went (monotonic); forgotten as the call ends.
    private var lastSent: [String: Double] = [:]
    private var releaseQueued = false
    private var timer: TimerSource?

    /// Whether tones wait for their turn on the timer (never while none wait).
    var isArmed: Bool { timer?.isArmed ?? false }

    /// Nothing waits and no call's tones were told: a call's end has nothing to clear here.
    var isEmpty: Bool { waiting.isEmpty && lastSent.isEmpty }

    init(loop: EventLoop, monotonic: @escaping () -> Double = monotonicNow,
         deliver: @escaping (HeardTones, Double) -> Void) {
        self.loop = loop
        self.monotonic = monotonic
        self.deliver = deliver
    }

    /// Tones of `call` heard at `time` (wall clock), already decoded.
    func heard(_ tones: String, dropped: Int, on call: CallSnapshot, at time: Double) {
        if let index = waiting.firstIndex(where: { $0.id == call.id }) {
            var gathered = waiting[index].tones.heard
            let room = HeardTones.limit - gathered.tones.utf8.count
            gathered.tones += tones.prefix(room)
            gathered.dropped += dropped + max(0, tones.utf8.count - room)
            waiting[index].tones.heard = gathered
        } else {
            waiting.append((call.id, Waiting(heard: HeardTones(call: call, tones: tones, dropped: dropped), heardAt: time)))
        }
        guard !releaseQueued else { return }
        // At the turn's end: every signal the turn dispatched is in by then.
        releaseQueued = true
        loop.soon { [weak self] in self?.release() }
    }

    /// The call ends: what it still holds goes now, before its end is told.
    func callEnds(_ id: String) {
        lastSent[id] = nil
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        let (_, tones) = waiting.remove(at: index)
        deliver(tones.heard, tones.heardAt)
        if waiting.isEmpty { timer?.cancel() }
    }

    /// Everything waiting goes now (the monitor stops); nothing stays armed.
    func flush() {
        timer?.cancel()
        let all = waiting
        waiting.removeAll()
        lastSent.removeAll()
        for (_, tones) in all { deliver(tones.heard, tones.heardAt) }
    }

    private func release() {
        releaseQueued = false
        let now = monotonic()
        var due: [Waiting] = []
        var nextDue: Double?
        waiting.removeAll { entry in
            if let last = lastSent[entry.id], now - last < ToneGate.spacing {
                nextDue = min(nextDue ?? .infinity, last + ToneGate.spacing)
                return false
            }
            lastSent[entry.id] = now
            due.append(entry.tones)
            return true
        }
        if let nextDue { arm(after: nextDue - now) } else { timer?.cancel() }
        for tones in due { deliver(tones.heard, tones.heardAt) }
    }

    private func arm(after seconds: Double) {
        if timer == nil { timer = try? loop.timer { [weak self] in self?.release() } }
        // No timer to be had (no file descriptor left): the tones go at the next turn instead.
        guard let timer else { return loop.soon { [weak self] in self?.releaseAll() } }
        timer.schedule(after: seconds)
    }

    private func releaseAll() {
        for index in waiting.indices { lastSent[waiting[index].id] = nil }
        release()
    }
}
