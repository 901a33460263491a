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
