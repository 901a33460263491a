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
    case callRemoved(CallKey, reason: CallEndReason?)
    /// The backend's bus name vanished: every call of this backend ends with reason "backend-lost".
    case backendLost(BackendKind)
    /// A modem went away: its calls end with reason "modem-removed".
    case modemRemoved(BackendKind, modem: String)
    /// What a modem is (its equipment id, own number, operator), when first learned and whenever
    /// it changes: the modem's calls carry it from then on. Never an event of its own.
    case modemIdentified(BackendKind, modem: String, ModemIdentity)
    /// The far end pressed tones on a call (ModemManager's `DtmfReceived`), already decoded:
    /// only DTMF tones kept, `dropped` counting the rest. Never a tracker event: the monitor
    /// finds the call by its key and paces the tones (`ToneGate`).
    case tonesHeard(CallKey, tones: String, dropped: Int)
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
        // Tones leave an announcement as it was: they are not about what the call is.
        case .backendLost, .modemRemoved, .modemIdentified, .learnedOnResume, .tonesHeard: return nil
        }
    }
}
