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
