import Loop

/// The history's latest trouble with its database: what has been said about it, and when a
/// write is tried again. Later turns try less often the longer it lasts: a lock held for an hour
/// costs one busy wait a minute, not one a turn.
struct WriteTrouble {
    /// The wait after a first failure; each further one doubles it, up to a minute.
    let delay: Double
    /// The problem last said, until a write succeeds.
    private(set) var said: HistoryProblem?
    private var failures = 0
    private var retryAt: Double?

    init(delay: Double) {
        self.delay = delay
    }

    /// Records a failure; true when it is news (not the problem said last).
    mutating func failed(_ problem: HistoryProblem) -> Bool {
        failures += 1
        retryAt = monotonicNow() + min(60, delay * Double(1 << min(failures - 1, 6)))
        defer { said = problem }
        return said != problem
    }

    /// Records a success; true when a problem had been said (its end is news).
    mutating func succeeded() -> Bool {
        failures = 0
        retryAt = nil
        defer { said = nil }
        return said != nil
    }

    /// Whether the wait after the last failure is over.
    var mayTry: Bool { retryAt.map { monotonicNow() >= $0 } ?? true }

    /// The next turn tries whatever the wait (telwatch is stopping, or something must be read).
    mutating func tryNow() { retryAt = nil }
}
