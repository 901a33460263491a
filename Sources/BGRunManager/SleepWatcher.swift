import DBus
import Loop

/// Follows systemd-logind's `PrepareForSleep(b)` (`org.freedesktop.login1.Manager` on
/// `/org/freedesktop/login1`): `true` just before the system suspends, `false` once it has resumed
/// (docs/modem-stacks.md §4.2, §5). Only the current owner of `org.freedesktop.login1` is believed: any local
/// process may broadcast the same signal, and one from anyone else is reported as `ignored` and
/// changes nothing. It knows logind, not calls or runs; it arms no timer and wakes no one.
public final class SleepWatcher {
    public static let member = "PrepareForSleep"

    public enum Event: Equatable, Sendable {
        /// `PrepareForSleep(true)`: the system is about to sleep. Wall-clock seconds.
        case preparingForSleep(time: Double)
        /// `PrepareForSleep(false)`: the system is awake again. `asleepSince` is when the matching
        /// `preparingForSleep` came, nil when it was not seen (telwatch started in between).
        case resumed(time: Double, asleepSince: Double?)
        /// A `PrepareForSleep` from a sender that is not logind's current owner. At most
        /// `reportLimit` are reported per `reportWindow`; `suppressed` counts those not reported
        /// since the previous one.
        case ignored(sender: String, suppressed: Int)
        /// A `PrepareForSleep` from logind whose body is not one boolean: skipped.
        case malformed(signature: String)
    }

    static let reportLimit = 5
    static let reportWindow = 60.0

    private let clock: () -> Double
    private let monotonic: () -> Double
    private let onEvent: (Event) -> Void
    private var ownerWatch: NameOwnerWatch?
    private var subscription: Subscription?
    /// When the system went to sleep, while it is asleep (between `true` and `false`).
    public private(set) var asleepSince: Double?
    private var windowOpened = -Double.infinity
    private var reportedInWindow = 0
    private var suppressed = 0

    /// `clock` stamps events (wall clock: the monotonic clock stands still while the system sleeps);
    /// `monotonic` paces the limit on reports of ignored signals.
    public init(connection: Connection, clock: @escaping () -> Double = wallClockNow,
                monotonic: @escaping () -> Double = monotonicNow,
                onEvent: @escaping (Event) -> Void) throws {
        self.clock = clock
        self.monotonic = monotonic
        self.onEvent = onEvent
        let watch = try connection.watchName(InhibitorLock.busName) { _ in }
        ownerWatch = watch
        let rule = MatchRule(sender: InhibitorLock.busName, path: InhibitorLock.path.rawValue,
                             interface: InhibitorLock.interface, member: SleepWatcher.member)
        subscription = connection.subscribe(rule, owner: watch, onRejected: { [weak self, weak watch] message in
            // Before the bus answered who owns the name every sender looks foreign: nothing to say yet.
            guard watch?.isResolved == true else { return }
            self?.rejected(message)
        }) { [weak self] message in
            self?.received(message)
        }
    }

    deinit { cancel() }

    public var isAsleep: Bool { asleepSince != nil }

    /// Stops following the signal; safe to call twice.
    public func cancel() {
        subscription?.cancel()
        subscription = nil
        ownerWatch?.cancel()
        ownerWatch = nil
    }

    private func received(_ message: Message) {
        guard let sleeping = try? message.decode(Bool.self) else {
            onEvent(.malformed(signature: String(message.signature.prefix(40))))
            return
        }
        let now = clock()
        if sleeping {
            // logind says it once per sleep; a repeat changes nothing.
            guard asleepSince == nil else { return }
            asleepSince = now
            onEvent(.preparingForSleep(time: now))
        } else {
            let since = asleepSince
            asleepSince = nil
            onEvent(.resumed(time: now, asleepSince: since))
        }
    }

    private func rejected(_ message: Message) {
        let now = monotonic()
        if now - windowOpened >= Self.reportWindow {
            windowOpened = now
            reportedInWindow = 0
        }
        guard reportedInWindow < Self.reportLimit else {
            suppressed += 1
            return
        }
        reportedInWindow += 1
        let held = suppressed
        suppressed = 0
        onEvent(.ignored(sender: String((message.sender ?? "?").prefix(80)), suppressed: held))
    }
}
