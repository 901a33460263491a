import CallMonitor

// Where the fakes put modems and calls, for tests that feed the tracker or the pipeline by hand.

/// The first modem of ModemManager (and of the project's fake).
public let mmModem = "/org/freedesktop/ModemManager1/Modem/0"

/// ModemManager's call number `n`.
public func mmKey(_ n: Int) -> CallKey {
    CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/\(n)")
}

/// oFono's phonesim modem.
public let ofModem = "/phonesim"

/// oFono's call number `n` on phonesim, named as oFono names it (two digits at least).
public func ofKey(_ n: Int) -> CallKey {
    CallKey(backend: .ofono, path: n < 10 ? "/phonesim/voicecall0\(n)" : "/phonesim/voicecall\(n)")
}
