import CallMonitor
import Loop
import Pipeline

/// The session's acts on calls (`SinkSession.act` and `dial`, docs/modem-stacks.md §13): a call
/// named by its id becomes its stack's call, the monitor acts, and what came of it goes into the
/// pipeline as an `acted` event before whoever asked is answered. A dial's answer names its new
/// call: when the stack answers before the tracker has seen that call, the answer waits for the
/// call's first event, a bounded while (a timer armed only while a dial waits).
final class SessionActs {
    /// How long a dial the stack has placed waits for its call to be seen; past it, the dial is
    /// told without a call id (the call ended at once, or its stack did not show it).
    static let sightWait = 3.0

    private let monitor: () -> CallMonitor?
    private let send: (PipelineEvent) -> Void
    private let timer: TimerSource
    private var awaiting: [AwaitedDial] = []

    private struct AwaitedDial {
        let key: CallKey
        let deadline: Double
        let seen: (CallSnapshot?) -> Void
    }

    init(loop: EventLoop, monitor: @escaping () -> CallMonitor?, send: @escaping (PipelineEvent) -> Void) throws {
        self.monitor = monitor
        self.send = send
        var due: () -> Void = {}
        timer = try loop.timer { due() }
        due = { [weak self] in self?.expire() }
    }

    func act(_ act: CallAct, on callID: String, by requester: ActRequester, uid: UInt32?,
             done: @escaping (CallActReport) -> Void) {
        let target: String? = if case .deflect(let number) = act { number } else { nil }
        func told(_ call: CallSnapshot?, _ report: CallActReport) {
            send(.acted(ActedCall(kind: .init(act), callID: callID, call: call, requester: requester, uid: uid,
                                  number: target, report: report), time: wallClockNow()))
            done(report)
        }
        guard let monitor = monitor() else { return told(nil, CallActReport(.failure(.stackGone))) }
        guard let call = monitor.liveCalls.first(where: { $0.id == callID }) else {
            return told(nil, CallActReport(.failure(.noSuchCall)))
        }
        monitor.act(act, on: call.key) { told(call, $0) }
    }

    func dial(_ number: String, modem: String?, by requester: ActRequester, uid: UInt32?,
              done: @escaping (CallActReport) -> Void) {
        func told(_ call: CallSnapshot?, _ report: CallActReport) {
            send(.acted(ActedCall(kind: .dial, callID: call?.id, call: call, requester: requester, uid: uid,
                                  number: number, modem: modem, report: report), time: wallClockNow()))
            done(report)
        }
        guard let monitor = monitor() else { return told(nil, CallActReport(.failure(.stackGone))) }
        monitor.dial(number, modem: modem) { [weak self] report in
            guard let self, case .success(let key) = report.outcome else { return told(nil, report) }
            self.whenSeen(key) { told($0, report) }
        }
    }

    /// The tracker's events, once the pipeline has them: a dial waiting for its call is told here
    /// (its `acted` so comes after the call's first line).
    func saw(_ events: [TrackerEvent]) {
        guard !awaiting.isEmpty else { return }
        for event in events {
            guard let call = event.call, let index = awaiting.firstIndex(where: { $0.key == call.key }) else { continue }
            awaiting.remove(at: index).seen(call)
        }
        arm()
    }

    private func whenSeen(_ key: CallKey, then seen: @escaping (CallSnapshot?) -> Void) {
        if let call = monitor()?.liveCalls.first(where: { $0.key == key }) { return seen(call) }
        awaiting.append(AwaitedDial(key: key, deadline: monotonicNow() + SessionActs.sightWait, seen: seen))
        arm()
    }

    private func expire() {
        let now = monotonicNow()
        let due = awaiting.filter { $0.deadline <= now }
        awaiting.removeAll { $0.deadline <= now }
        for dial in due { dial.seen(nil) }
        arm()
    }

    private func arm() {
        guard let next = awaiting.map(\.deadline).min() else {
            if timer.isArmed { timer.cancel() }
            return
        }
        timer.schedule(after: max(0.001, next - monotonicNow()))
    }
}
