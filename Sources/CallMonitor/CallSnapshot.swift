// The backend-neutral call model (docs/modem-stacks.md §1).
//
// Backends turn bus messages into `BackendEvent`s (raw values already mapped by
// `ModemManagerMapping` / `OfonoMapping`); `CallTracker` turns those into `TrackerEvent`s.
// Nothing here does I/O; nothing here needs Foundation.

/// Everything telwatch knows about one call at one moment.
public struct CallSnapshot: Sendable, Equatable {
    /// UUID (v4, lowercase 8-4-4-4-12), new for every call, even on a reused path.
    public var id: String
    public var key: CallKey
    /// The modem's object path; `.unknown` if the call was first seen through a signal that does
    /// not name the modem (and no later sync named it).
    public var modem: ModemPath
    /// What the modem is, as last learned while the call lived (kept after the modem goes).
    public var modemIdentity: ModemIdentity
    public var direction: CallDirection
    /// "" = unknown; oFono "withheld" kept as is.
    public var number: String
    public var name: String
    public var state: CallState
    /// nil once disconnected.
    public var detail: CallDetail?
    /// Why the call is where it is (the stack's word for its last change, or telwatch's own end).
    public var reason: CallEndReason?
    public var multiparty: Bool
    public var initial: Bool
    /// This event was learned by the resync after a resume (the call changed while the system
    /// slept and its signals were never seen), not from a signal as it happened. Per event: the
    /// tracker's stored snapshots (`liveCalls`) keep it false.
    public var resumed: Bool
    /// Wall-clock seconds (injected by the caller).
    public var firstSeen: Double
    public var connectedAt: Double?
    public var endedAt: Double?
    /// An incoming call that ended without ever being connected, as far as anyone can tell: the
    /// tracker alone decides (it knows what a snapshot cannot, e.g. after a resume). Set on the
    /// `disconnected` snapshot and the `missed` event's.
    public var missed: Bool

    public var everConnected: Bool { connectedAt != nil }

    /// A call that came and went entirely while telwatch was not looking (found already ended
    /// after a resume): when it started, and for how long, is unknown.
    public var lifeUnseen: Bool { resumed && state == .disconnected && endedAt == firstSeen }

    /// How long an ended call lasted: from its answer if it was connected, else from its first
    /// sight. nil while live, and for a call that came and went unseen (its length is unknown).
    public var duration: Double? {
        guard !lifeUnseen, let endedAt else { return nil }
        return endedAt - (connectedAt ?? firstSeen)
    }

    public init(
        id: String,
        key: CallKey,
        modem: ModemPath,
        modemIdentity: ModemIdentity = .unknown,
        direction: CallDirection,
        number: String = "",
        name: String = "",
        state: CallState,
        detail: CallDetail?,
        reason: CallEndReason? = nil,
        multiparty: Bool = false,
        initial: Bool = false,
        resumed: Bool = false,
        firstSeen: Double,
        connectedAt: Double? = nil,
        endedAt: Double? = nil,
        missed: Bool = false
    ) {
        self.id = id
        self.key = key
        self.modem = modem
        self.modemIdentity = modemIdentity
        self.direction = direction
        self.number = number
        self.name = name
        self.state = state
        self.detail = detail
        self.reason = reason
        self.multiparty = multiparty
        self.initial = initial
        self.resumed = resumed
        self.firstSeen = firstSeen
        self.connectedAt = connectedAt
        self.endedAt = endedAt
        self.missed = missed
    }
}
