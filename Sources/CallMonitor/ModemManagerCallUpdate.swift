/// A change to one call, as it arrived.
enum ModemManagerCallUpdate: Equatable {
    /// `reason` stays the `u` it came as: its unknown values reach above `Int32.max`.
    case stateChanged(old: ModemManagerStateValue, new: ModemManagerStateValue, reason: UInt32)
    case properties(ModemManagerCallProperties)

    func observation(direction: inout ModemManagerCallDirection) -> CallObservation {
        switch self {
        case let .stateChanged(_, new, reason):
            return CallObservation(phase: ModemManagerMapping.phase(state: new, direction: direction),
                                   reason: ModemManagerMapping.reason(reason))
        case let .properties(properties):
            return properties.observation(direction: &direction)
        }
    }

    var newState: ModemManagerStateValue? {
        switch self {
        case let .stateChanged(_, new, _): return new
        case let .properties(properties): return properties.state
        }
    }
}
