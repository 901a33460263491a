/// A call an earlier telwatch knew live, as it left it (the state directory's `live-calls`
/// record): what the tracker needs to go on with that call when a start's sync finds it still
/// live, under the same id, first sight and answer (docs/modem-stacks.md §1.8).
public struct RememberedCall: Sendable, Equatable {
    public var id: String
    public var key: CallKey
    public var direction: CallDirection
    /// "" when it was not known.
    public var number: String
    public var state: CallState
    public var firstSeen: Double
    public var connectedAt: Double?

    public init(id: String, key: CallKey, direction: CallDirection, number: String, state: CallState,
                firstSeen: Double, connectedAt: Double?) {
        self.id = id
        self.key = key
        self.direction = direction
        self.number = number
        self.state = state
        self.firstSeen = firstSeen
        self.connectedAt = connectedAt
    }

    /// A live call, as the next telwatch is to find it.
    public init(_ call: CallSnapshot) {
        self.init(id: call.id, key: call.key, direction: call.direction, number: call.number, state: call.state,
                  firstSeen: call.firstSeen, connectedAt: call.connectedAt)
    }

    /// Whether a call the sync found on this key may be this one: ModemManager and oFono keep a
    /// call's object while it lives, but reuse a freed path for the next call, so a state no call
    /// goes back to, another direction or another known number is another call.
    func mayBe(_ observation: CallObservation, state found: CallState) -> Bool {
        let earlier = CallSnapshot(id: id, key: key, modem: "", direction: direction, number: number, state: state,
                                   detail: nil, firstSeen: firstSeen, connectedAt: connectedAt)
        return !CallTracker.isAnotherCall(earlier, observation, state: found)
    }
}
