import CLoop
import Glibc

/// A timer on its own timerfd. Disarmed timers cost nothing.
public final class TimerSource {
    private let fd: Int32
    private var source: IOSource?
    private let handler: () -> Void
    public private(set) var isArmed = false

    init(loop: EventLoop, handler: @escaping () -> Void) throws {
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
