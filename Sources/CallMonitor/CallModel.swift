// The backend-neutral call model (docs/modem-stacks.md §1).
//
// Backends turn bus messages into `BackendEvent`s (raw values already mapped by
// `ModemManagerMapping` / `OfonoMapping`); `CallTracker` turns those into `TrackerEvent`s.
// Nothing here does I/O; nothing here needs Foundation.

/// Which telephony stack a call comes from.
public enum BackendKind: String, Sendable, CaseIterable {
    case modemManager = "modemmanager"
    case ofono = "ofono"
}

/// The four per-call states telwatch reports.
public enum CallState: String, Sendable, CaseIterable {
    case incoming, dialing, connected, disconnected
}

/// The finer backend state kept alongside a live `CallState`.
public enum CallDetail: String, Sendable, CaseIterable {
    case ringing, waiting, dialing, alerting, active, held
}

public enum CallDirection: String, Sendable, CaseIterable {
    case incoming, outgoing, unknown
}

/// Where a backend says a call is now (already mapped from raw backend values by StateMapping).
public enum CallPhase: Equatable, Sendable {
    /// A live call. `state` is never `.disconnected` here; if it is anyway, the tracker
    /// treats it as `.ended`.
    case live(CallState, CallDetail)
    /// MM TERMINATED, oFono "disconnected".
    case ended
    /// A raw value we do not know: kept verbatim, never a transition.
    case unknown(String)
}

/// Identity of a call on the bus: backend + object path. Paths are REUSED, so this is not the
/// call's id (`CallSnapshot.id` is).
public struct CallKey: Hashable, Sendable {
    public var backend: BackendKind
    public var path: String

    public init(backend: BackendKind, path: String) {
        self.backend = backend
        self.path = path
    }
}

/// What a backend observed about a call; nil = not reported in this observation.
public struct CallObservation: Sendable, Equatable {
    public var phase: CallPhase?
    public var direction: CallDirection?
    public var number: String?
    public var name: String?
    public var multiparty: Bool?
    /// e.g. "accepted", "refused-or-busy", "remote", or a raw unknown value kept verbatim.
    public var reason: String?
    /// The backend's own word that the call was connected at some point, for a call telwatch
    /// may never have seen connected (ModemManager: an ended call whose StateReason is accepted
    /// or transferred). Only `true` is evidence; nil = the backend does not say.
    public var everConnected: Bool?

    public init(
        phase: CallPhase? = nil,
        direction: CallDirection? = nil,
        number: String? = nil,
        name: String? = nil,
        multiparty: Bool? = nil,
        reason: String? = nil,
        everConnected: Bool? = nil
    ) {
        self.phase = phase
        self.direction = direction
        self.number = number
        self.name = name
        self.multiparty = multiparty
        self.reason = reason
        self.everConnected = everConnected
    }
}

public enum BackendEvent: Sendable {
    /// A new call object exists; what it is (its state, direction, number) is still being read.
    /// Every new call object is a live call, so this is enough to hold the run.
    case callAnnounced(CallKey, modem: String)
    /// A call appeared (CallAdded, or found by ListCalls/GetCalls at sync).
    /// `initial` = found at start-up/resync.
    case callAppeared(CallKey, modem: String, CallObservation, initial: Bool)
    /// Something about a known call changed (StateChanged, PropertiesChanged, PropertyChanged,
    /// DisconnectReason…).
    case callChanged(CallKey, CallObservation)
    /// The backend removed the call object (MM CallDeleted, oFono CallRemoved).
    /// `reason` if the backend gave one.
    case callRemoved(CallKey, reason: String?)
    /// The backend's bus name vanished: every call of this backend ends with reason "backend-lost".
    case backendLost(BackendKind)
    /// A modem went away: its calls end with reason "modem-removed".
    case modemRemoved(BackendKind, modem: String)
    /// What a modem is (its equipment id, own number, operator), when first learned and whenever
    /// it changes: the modem's calls carry it from then on. Never an event of its own.
    case modemIdentified(BackendKind, modem: String, ModemIdentity)
    /// What the resync after a resume found (a call listed, a call read again, a call or modem
    /// gone). The tracker reconciles it with what it knew before the sleep: a call listed already
    /// ended that it never saw is news (not history as at start-up), a call listed on a path whose
    /// live call plainly cannot have become it (oFono reuses paths) replaces that call, and every
    /// event it causes is flagged `resumed`.
    /// (Only this case is boxed: the events of every signal stay plain values.)
    indirect case learnedOnResume(BackendEvent)

    /// The call the event is about, if it is about one call.
    var key: CallKey? {
        switch self {
        case .callAnnounced(let key, _), .callAppeared(let key, _, _, _), .callChanged(let key, _),
             .callRemoved(let key, _):
            return key
        case .backendLost, .modemRemoved, .modemIdentified, .learnedOnResume: return nil
        }
    }
}

/// Everything telwatch knows about one call at one moment.
public struct CallSnapshot: Sendable, Equatable {
    /// UUID (v4, lowercase 8-4-4-4-12), new for every call, even on a reused path.
    public var id: String
    public var key: CallKey
    /// The modem's object path; "" if the call was first seen through a signal that does not
    /// name the modem (and no later sync named it): `ModemPath.unknown` as the event carries it.
    public var modem: String
    /// What the modem is, as last learned while the call lived (kept after the modem goes).
    public var modemIdentity: ModemIdentity
    public var direction: CallDirection
    /// "" = unknown; oFono "withheld" kept as is.
    public var number: String
    public var name: String
    public var state: CallState
    /// nil once disconnected.
    public var detail: CallDetail?
    public var reason: String?
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
        modem: String,
        modemIdentity: ModemIdentity = .unknown,
        direction: CallDirection,
        number: String = "",
        name: String = "",
        state: CallState,
        detail: CallDetail?,
        reason: String? = nil,
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

public enum TrackerEvent: Sendable, Equatable {
    /// The call's state or detail changed. `previous` nil = first sight of the call.
    case transition(CallSnapshot, previous: CallState?)
    /// Only number/name/multiparty (or an unknown direction becoming known) changed; state same.
    case updated(CallSnapshot)
    /// An incoming call ended without ever connecting.
    case missed(CallSnapshot)
    /// The first live call appeared (aggregate edge: live-call count 0 → 1).
    case busy(CallSnapshot)
    /// The last live call ended (aggregate edge: live-call count 1 → 0).
    case idle(CallSnapshot)
    /// A new call object whose state is still being read: a live call by the stack's account.
    /// `id` is the call's id from now on: its first `transition` carries it once the call is
    /// read, or `withdrawn` if it never becomes a call.
    case announced(CallKey, id: String)
    /// An announced call object went (deleted, unreadable, its stack gone) without becoming a call.
    case withdrawn(CallKey, id: String)

    /// The call the event is about; nil for an announcement, which has no snapshot yet.
    public var call: CallSnapshot? {
        switch self {
        case .transition(let call, _), .updated(let call), .missed(let call), .busy(let call), .idle(let call):
            return call
        case .announced, .withdrawn:
            return nil
        }
    }
}

/// Call ids: random UUIDs (version 4, RFC 9562), lowercase 8-4-4-4-12.
public enum CallID {
    /// A UUID v4 from `SystemRandomNumberGenerator`.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A UUID v4 from the given generator (deterministic generators make deterministic ids).
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> String {
        var high: UInt64 = generator.next()
        var low: UInt64 = generator.next()
        // Version 4 in the high nibble of byte 6; variant 0b10 in the top bits of byte 8.
        high = (high & ~UInt64(0xF000)) | 0x4000
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let h = hex16(high)
        let l = hex16(low)
        var out = ""
        out.reserveCapacity(36)
        out += h.prefix(8)
        out += "-"
        out += h.dropFirst(8).prefix(4)
        out += "-"
        out += h.dropFirst(12)
        out += "-"
        out += l.prefix(4)
        out += "-"
        out += l.dropFirst(4)
        return out
    }

    /// True for a lowercase 8-4-4-4-12 hex string with version 4 and the RFC variant.
    public static func isWellFormed(_ id: String) -> Bool {
        let chars = Array(id.utf8)
        guard chars.count == 36 else { return false }
        for (i, c) in chars.enumerated() {
            switch i {
            case 8, 13, 18, 23:
                if c != UInt8(ascii: "-") { return false }
            default:
                let isDigit = c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
                let isLowerHex = c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f")
                if !(isDigit || isLowerHex) { return false }
            }
        }
        let variant = chars[19]
        return chars[14] == UInt8(ascii: "4")
            && (variant == UInt8(ascii: "8") || variant == UInt8(ascii: "9")
                || variant == UInt8(ascii: "a") || variant == UInt8(ascii: "b"))
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16, uppercase: false)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
