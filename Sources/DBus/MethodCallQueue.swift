import Loop

/// Method calls to one owner of a service, within what the bus allows: dbus-daemon counts every
/// call against the caller's connection until its callee answers or leaves the bus, whatever
/// the caller's own timeout, and past its limit (128, system bus too) refuses every further
/// call on that connection (docs/modem-stacks.md §8). So an owner that stops answering must not
/// be asked without end:
/// - at most `maxInFlight` calls are out at once, and at most `budget` counted at the bus
///   (out, or timed out here and not answered yet);
/// - while any call has timed out and not been answered (the breaker is open), one call at a
///   time probes the owner, and only while `reserve` places of the budget stay free;
/// - an `.urgent` call goes before everything else, newest first, and while it is fresh it is
///   sent at once, past the open breaker and into the reserve: what someone waits for now (in
///   CallMonitor, a ringing call's first read) never waits behind calls that will never be
///   answered, however many of those there are;
/// - a late answer still reaches the caller (`late`), and frees its place in the budget;
/// - at most `maxWaiting` calls wait; past that the oldest is refused.
public final class MethodCallQueue {
    public enum Priority {
        /// What someone waits for now (CallMonitor: the first read of a call that just rang).
        case urgent
        /// Listings and reads again: they can wait.
        case routine
    }

    public static let maxInFlight = 32
    public static let budget = 64
    /// Places of the budget only fresh urgent calls may take.
    public static let reserve = 16
    public static let maxWaiting = 256
    /// An urgent call this young is sent past the open breaker, up to `freshPastBreaker` at once.
    public static let fresh = 1.0
    public static let freshPastBreaker = 4

    private struct WaitingCall {
        let message: Message
        let timeout: Double
        let queued: Double
        let reply: (Result<Message, DBusError>) -> Void
        let late: ((Result<Message, DBusError>) -> Void)?
    }

    private let connection: Connection
    private var urgent: [WaitingCall] = []
    private var routine: [WaitingCall] = []
    private var inFlight: [UInt64: PendingCall] = [:]
    /// Calls that timed out here but that the bus still counts, by serial.
    private var unanswered: Set<UInt32> = []
    private var nextCall: UInt64 = 0
    private var epoch: UInt64 = 0
    /// Some call timed out and its answer has not come: the owner may not answer at all.
    public var isBreakerOpen: Bool { !unanswered.isEmpty }

    public init(connection: Connection) {
        self.connection = connection
    }

    /// Calls counted against the connection at the bus now.
    public var counted: Int { inFlight.count + unanswered.count }
    public var waitingCount: Int { urgent.count + routine.count }

    /// `reply` runs exactly once, unless `cancelAll()` comes first (then never). With `late`, an
    /// answer that comes after the call timed out (after `reply` saw `.timedOut`) reaches it too.
    public func send(_ message: Message, timeout: Double, priority: Priority = .routine,
              late: ((Result<Message, DBusError>) -> Void)? = nil,
              reply: @escaping (Result<Message, DBusError>) -> Void) {
        let call = WaitingCall(message: message, timeout: timeout, queued: monotonicNow(), reply: reply, late: late)
        switch priority {
        case .urgent: urgent.append(call)
        case .routine: routine.append(call)
        }
        if waitingCount > MethodCallQueue.maxWaiting {
            // The oldest routine call, else the oldest urgent one: the newest are what matters.
            let dropped = routine.isEmpty ? urgent.removeFirst() : routine.removeFirst()
            let refusal = DBusError.remote(name: MethodCallQueue.limitsExceeded,
                                           message: "not sent: \(MethodCallQueue.maxWaiting) calls were already waiting")
            let epoch = self.epoch
            connection.loop.soon { [weak self] in
                guard let self, self.epoch == epoch else { return }
                dropped.reply(.failure(refusal))
            }
        }
        sendWaiting()
    }

    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    /// A call that could not be sent fails (with `error`) on the loop's next turn, as a sent one
    /// would: its caller never sees its reply before the call returns.
    public func failSoon(_ reply: @escaping (Result<Message, DBusError>) -> Void,
                         with error: DBusError = .disconnected) {
        let epoch = self.epoch
        connection.loop.soon { [weak self] in
            guard let self, self.epoch == epoch else { return }
            reply(.failure(error))
        }
    }

    /// Drops every call waiting or in flight: their replies will not run. For an owner that left
    /// the bus, which freed everything the bus counted for it.
    public func cancelAll() {
        epoch &+= 1
        urgent.removeAll()
        routine.removeAll()
        let pending = inFlight
        inFlight.removeAll()
        for call in pending.values { call.cancel() }
        for serial in unanswered { connection.forgetLateReply(to: serial) }
        unanswered.removeAll()
    }

    private func canSend(_ call: WaitingCall, urgent isUrgent: Bool) -> Bool {
        guard counted < MethodCallQueue.budget else { return false }
        if isBreakerOpen, isUrgent, monotonicNow() - call.queued < MethodCallQueue.fresh {
            // Into the reserve, past the probe, a few at a time: a stream of urgent calls that are
            // never answered takes the reserve slowly, a real one gets through at once.
            return inFlight.count < 1 + MethodCallQueue.freshPastBreaker
        }
        guard counted < MethodCallQueue.budget - MethodCallQueue.reserve else { return false }
        return isBreakerOpen ? inFlight.isEmpty : inFlight.count < MethodCallQueue.maxInFlight
    }

    private func sendWaiting() {
        while true {
            let isUrgent = !urgent.isEmpty
            guard let next = isUrgent ? urgent.last : routine.first, canSend(next, urgent: isUrgent) else { return }
            if isUrgent { urgent.removeLast() } else { routine.removeFirst() }
            let token = nextCall
            nextCall &+= 1
            var serial: UInt32 = 0
            let pending = connection.call(next.message, timeout: next.timeout) { [weak self] result in
                guard let self, self.inFlight.removeValue(forKey: token) != nil else { return }
                if case .failure(.timedOut) = result { self.timedOut(serial, late: next.late) }
                next.reply(result)
                self.sendWaiting()
            }
            // No handle: the connection is gone and its own failure reply finds no token, so report here.
            guard let pending else {
                failSoon(next.reply)
                continue
            }
            serial = pending.serial
            inFlight[token] = pending
        }
    }

    /// The bus still counts the call; the owner is not answering.
    private func timedOut(_ serial: UInt32, late: ((Result<Message, DBusError>) -> Void)?) {
        unanswered.insert(serial)
        let epoch = self.epoch
        connection.awaitLateReply(toSerial: serial) { [weak self] message in
            guard let self, self.epoch == epoch else { return }
            self.unanswered.remove(serial)
            late?(message.asError.map { .failure($0) } ?? .success(message))
            self.sendWaiting()
        }
    }
}
