import CallMonitor

/// What the rules are told about a caller besides the call itself: gathered by `CallScreener`
/// from the contacts and the calls seen, so the decision stays a pure function.
public struct ScreeningFacts: Sendable, Equatable {
    /// The number is in the contacts.
    public var isContact: Bool
    /// When this number last called before this call (wall-clock seconds).
    public var lastIncoming: Double?
    /// When this phone last called this number.
    public var lastOutgoing: Double?
    /// When this phone last made an emergency call.
    public var lastEmergency: Double?

    public init(isContact: Bool = false, lastIncoming: Double? = nil, lastOutgoing: Double? = nil,
                lastEmergency: Double? = nil) {
        self.isContact = isContact
        self.lastIncoming = lastIncoming
        self.lastOutgoing = lastOutgoing
        self.lastEmergency = lastEmergency
    }
}

extension ScreeningRules {
    /// After an outgoing emergency call no rule acts for this long: the service may call back.
    public static let emergencyWindow: Double = 3600

    /// The decision for an incoming call whose number is `number` ("" never comes here: a number
    /// not yet known is not decided), at wall-clock `now` (`local` is the same moment on the local
    /// clock). nil: no rule speaks of this call, it rings. The order is docs/screening.md's.
    public func decide(number: String, facts: ScreeningFacts, now: Double, local: LocalTime) -> ScreeningDecision? {
        if let emergency = facts.lastEmergency, now - emergency < ScreeningRules.emergencyWindow, now >= emergency {
            return ScreeningDecision(action: .allow, rule: .emergency)
        }
        let isWithheld = ScreeningRules.isWithheld(number)
        if !isWithheld {
            if let source = allowed.source(of: number) { return ScreeningDecision(action: .allow, rule: .allow, source: source) }
            if exceptContacts && facts.isContact { return ScreeningDecision(action: .allow, rule: .contact) }
            // The strongest action first, should a number be in several block lists.
            for action in blockOrder {
                if let source = blocked[action]?.source(of: number) {
                    return ScreeningDecision(action, rule: .block, source: source)
                }
            }
            if let window = repeatWindow, let last = facts.lastIncoming, now - last <= window, now >= last {
                return ScreeningDecision(action: .allow, rule: .repeatCaller)
            }
            if let window = calledWindow, let last = facts.lastOutgoing, now - last <= window, now >= last {
                return ScreeningDecision(action: .allow, rule: .called)
            }
        }
        if isWithheld, let withheld {
            return ScreeningDecision(withheld.action, rule: .withheld, source: withheld.source)
        }
        if !isWithheld, !facts.isContact, let unknown {
            return ScreeningDecision(unknown.action, rule: .unknown, source: unknown.source)
        }
        if let window = quiet.first(where: { $0.contains(local) }) {
            return ScreeningDecision(window.action, rule: .quiet, source: window.source)
        }
        return nil
    }

    /// The words stacks use for a withheld number (oFono: `withheld`, docs/modem-stacks.md §1.6).
    public static func isWithheld(_ number: String) -> Bool {
        switch number.lowercased() {
        case "withheld", "anonymous", "private", "restricted", "unavailable": return true
        default: return false
        }
    }
}
