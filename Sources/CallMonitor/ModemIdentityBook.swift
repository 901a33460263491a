/// The identities of one backend's modems: every modem object heard of (a modem may get its
/// voice interface only once enabled), bounded, and told to the tracker for the voice modems
/// only, when it changes.
struct ModemIdentityBook {
    /// More modems than any host has: a flood of made-up ones does not grow memory.
    static let maxModems = 64

    private var known: [String: ModemIdentity] = [:]
    /// What the tracker was last told, per voice modem.
    private var told: [String: ModemIdentity] = [:]

    /// Applies a change; returns the identity to tell if `voice` and it is news.
    mutating func apply(_ change: ModemIdentityChange, modem: String, voice: Bool) -> ModemIdentity? {
        guard known[modem] != nil || known.count < Self.maxModems else { return nil }
        known[modem] = change.applied(to: known[modem] ?? .unknown)
        return voice ? toTell(modem) : nil
    }

    /// The identity to tell for a voice modem, if it has one the tracker was not told.
    mutating func toTell(_ modem: String) -> ModemIdentity? {
        guard let identity = known[modem], identity != told[modem] ?? .unknown else { return nil }
        told[modem] = identity
        return identity
    }

    /// The modem's voice went (the tracker forgets it): tell it again if the voice comes back.
    mutating func untold(_ modem: String) { told.removeValue(forKey: modem) }

    mutating func forget(_ modem: String) {
        known.removeValue(forKey: modem)
        told.removeValue(forKey: modem)
    }

    /// Keeps only the modems in `present` (a sync's listing).
    mutating func keep(_ present: Set<String>) {
        known = known.filter { present.contains($0.key) }
        told = told.filter { present.contains($0.key) }
    }

    mutating func removeAll() {
        known.removeAll()
        told.removeAll()
    }
}
