/// Things the user should hear about on stderr. Calls themselves travel as `TrackerEvent`s.
public enum BackendNotice: Sendable, Equatable, CustomStringConvertible {
    /// The service's name has an owner (at start, or after a restart); a sync follows.
    case serviceAppeared(BackendKind, owner: String)
    /// The owner went away: its calls ended with reason `backend-lost`. `liveCalls` is how many
    /// of its calls were live then (`CallMonitor` counts them: a backend does not know the tracker),
    /// so that "its live calls ended" is said only when there were some.
    case serviceVanished(BackendKind, liveCalls: Int = 0)
    /// Nobody owned the name at start; the backend waits for it.
    case serviceAbsent(BackendKind)
    /// A sync finished: voice modems and calls listed.
    case synced(BackendKind, modems: Int, calls: Int)
    /// The number of voice modems changed after a sync (a modem added, removed, or given or
    /// denied its voice interface): what `Backends` reports follows it. Not shown in the event
    /// stream: a modem is not a call.
    case modemsChanged(BackendKind, modems: Int)
    /// The service's policy refused our listing (oFono's at_console rule); said once per backend.
    /// Calls are still followed from signals.
    case syncRefused(BackendKind, String)
    /// A listing failed for another reason (timeout, error reply, unreadable reply).
    case syncFailed(BackendKind, String)
    /// One call's properties could not be read; it is followed from its next signal.
    case callUnreadable(BackendKind, String)
    /// A signal that matched our rules but did not come from the service's current owner.
    case rejectedSignal(BackendKind, sender: String, member: String)
    /// How many further rejected signals from `sender` were not reported one by one.
    case rejectedSuppressed(BackendKind, sender: String, count: Int)
    /// A message from the owner that we could not use (wrong signature, unknown value, huge
    /// string): skipped, or the unusable part left out.
    case malformed(BackendKind, String)
    /// How many further malformed notices were not reported one by one.
    case malformedSuppressed(BackendKind, count: Int)
    /// How many further unreadable-call notices were not reported one by one.
    case unreadableSuppressed(BackendKind, count: Int)
    /// The emergency numbers the stack lists for a modem (ModemManager: its SIM's
    /// `EmergencyNumbers`; oFono: `VoiceCallManager.EmergencyNumbers`), digits only, for call
    /// screening (docs/screening.md). Not shown in the event stream.
    case emergencyNumbers(BackendKind, modem: String, [String])

    /// What a notice says about the stack itself, for the event stream; nil for notices that are
    /// only warnings.
    public var status: BackendStatus? {
        switch self {
        case .serviceAppeared: return .appeared
        case .serviceVanished: return .vanished
        case .serviceAbsent: return .absent
        case .synced: return .synced
        case .syncRefused: return .syncRefused
        case .syncFailed: return .syncFailed
        case .callUnreadable, .rejectedSignal, .rejectedSuppressed, .malformed, .malformedSuppressed,
             .unreadableSuppressed, .modemsChanged, .emergencyNumbers: return nil
        }
    }

    /// Whether the notice reports a problem the user should look at (stderr, whatever the output).
    public var isWarning: Bool {
        switch self {
        case .syncRefused, .syncFailed, .callUnreadable, .rejectedSignal, .rejectedSuppressed, .malformed,
             .malformedSuppressed, .unreadableSuppressed: return true
        case .serviceAppeared, .serviceVanished, .serviceAbsent, .synced, .modemsChanged, .emergencyNumbers: return false
        }
    }

    public var backend: BackendKind {
        switch self {
        case .serviceAppeared(let kind, _), .serviceVanished(let kind, _), .serviceAbsent(let kind),
             .synced(let kind, _, _), .modemsChanged(let kind, _), .syncRefused(let kind, _), .syncFailed(let kind, _), .callUnreadable(let kind, _),
             .rejectedSignal(let kind, _, _), .rejectedSuppressed(let kind, _, _), .malformed(let kind, _),
             .malformedSuppressed(let kind, _), .unreadableSuppressed(let kind, _), .emergencyNumbers(let kind, _, _):
            return kind
        }
    }

    /// One line for stderr, without the program name.
    public var description: String {
        let name = backend.rawValue
        let service = backend.serviceName
        switch self {
        case .serviceAppeared(_, let owner): return "\(name): \(service) is running (owner \(owner))"
        case .serviceVanished(_, let live):
            return "\(name): \(service) went away"
                + (live == 0 ? "" : "; its live calls ended (\(CallEndReason.backendLost.word))")
        case .serviceAbsent: return "\(name): \(service) is not running; waiting for it"
        case .synced(_, let modems, let calls):
            return "\(name): synced: \(modems) voice modem\(modems == 1 ? "" : "s"), \(calls) call\(calls == 1 ? "" : "s")"
        case .modemsChanged(_, let modems): return "\(name): \(modems) voice modem\(modems == 1 ? "" : "s") now"
        case .syncRefused(_, let why):
            return "\(name): \(service) refused to list modems and calls to this user (\(why)); "
                + "following calls from signals only: calls already in progress are seen at their next change"
        case .syncFailed(_, let why): return "\(name): sync failed: \(why)"
        case .callUnreadable(_, let why): return "\(name): \(why)"
        case .rejectedSignal(_, let sender, let member):
            return "\(name): ignored \(member) from \(sender): not the owner of \(service)"
        case .rejectedSuppressed(_, let sender, let count):
            return "\(name): ignored \(count) more signal\(count == 1 ? "" : "s") from \(sender)"
        case .malformed(_, let what): return "\(name): skipped: \(what)"
        case .malformedSuppressed(_, let count):
            return "\(name): skipped \(count) more malformed message\(count == 1 ? "" : "s")"
        case .unreadableSuppressed(_, let count):
            return "\(name): \(count) more call\(count == 1 ? "" : "s") could not be read"
        case .emergencyNumbers(_, let modem, let numbers):
            return "\(name): \(CallText.clip(modem)) lists emergency numbers: "
                + (numbers.isEmpty ? "none" : numbers.joined(separator: " "))
        }
    }
}
