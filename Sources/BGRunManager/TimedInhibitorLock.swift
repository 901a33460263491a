import DBus
import Loop

/// An inhibitor lock held for a while: `hold(for:)` takes it (or keeps it) and arms one timer;
/// when the time is up, or on `release()`, the lock's descriptor is closed and the timer dropped.
/// No timer exists while the lock is not held, so an idle process still makes no wakeups.
public final class TimedInhibitorLock {
    public enum Event: Equatable, Sendable {
        /// logind handed the lock out (again, after a logind restart, while still wanted).
        case taken
        /// Wanted but not held: nothing is inhibited.
        case unavailable(String)
        /// Given up: `expired` when its time ran out, else `release()`.
        case released(expired: Bool)
    }

    public var request: InhibitorRequest { lock.request }
    private let loop: EventLoop
    private let lock: InhibitorLock
    private let onEvent: (Event) -> Void
    private var timer: TimerSource?
    /// Between `hold(for:)` and the end of its time or `release()`.
    public private(set) var isWanted = false

    public init(loop: EventLoop, connection: Connection, request: InhibitorRequest,
                onEvent: @escaping (Event) -> Void) throws {
        self.loop = loop
        self.onEvent = onEvent
        var forward: ((InhibitorLock.Event) -> Void)?
        lock = try InhibitorLock(connection: connection, request: request) { event in forward?(event) }
        forward = { [weak self] event in
            guard let self, self.isWanted else { return }
            switch event {
            case .taken, .retaken: self.onEvent(.taken)
            case .unavailable(let why): self.onEvent(.unavailable(why))
            }
        }
    }

    deinit {
        timer?.cancel()
        lock.release()
    }

    /// The lock's descriptor is open.
    public var isHeld: Bool { lock.isHeld }

    /// Whether its timer is armed (only while wanted).
    public var isArmed: Bool { timer?.isArmed == true }

    /// Time left, while wanted.
    public var remaining: Double? { timer?.remaining }

    /// Takes the lock, if not held already, and (re)starts its time: `seconds` from now.
    public func hold(for seconds: Double) {
        if timer == nil {
            do {
                timer = try loop.timer { [weak self] in self?.expire() }
            } catch {
                // A lock with no timer to give it back would be held for good: take none.
                onEvent(.unavailable("no timer to end it: \(error)"))
                return
            }
        }
        timer?.schedule(after: seconds)
        guard !isWanted else { return }
        isWanted = true
        lock.acquire()
    }

    /// Gives the lock up now; nothing happens when it is not wanted.
    public func release() {
        guard isWanted else { return }
        end(expired: false)
    }

    private func expire() {
        guard isWanted else { return }
        end(expired: true)
    }

    private func end(expired: Bool) {
        isWanted = false
        timer?.cancel()
        timer = nil
        lock.release()
        onEvent(.released(expired: expired))
    }
}
