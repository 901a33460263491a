/// A call's `CallAdded` carries only its path, so its properties are fetched; changes that
/// arrive while the fetch is out are older than its answer (one sender's messages stay in
/// order). Replaying the answer alone would lose them (a call that rang and ended before the
/// answer would look like history), replaying them after the answer would go backwards. So the
/// call starts in the state it had before the first queued change, the changes follow in order,
/// and the fetched properties come last as the newest word.
enum ModemManagerCallReplay {
    struct Result {
        var events: [BackendEvent]
        var direction: ModemManagerCallDirection
        var terminated: Bool
    }

    static func replay(key: CallKey, modem: String, initial: Bool, fetched: ModemManagerCallProperties?,
                       queued: [ModemManagerCallUpdate]) -> Result {
        var direction = fetched?.direction ?? firstDirection(queued) ?? .unknown
        var start = ModemManagerCallProperties(direction: direction, number: fetched?.number,
                                               multiparty: fetched?.multiparty)
        switch queued.first(where: { $0.newState != nil }) {
        case let .stateChanged(old, _, _)?:
            start.state = old
        case let .properties(properties)?:
            start.state = properties.state
            start.reason = properties.reason
        case nil:
            start.state = fetched?.state
            start.reason = fetched?.reason
        }
        let lastState = fetched?.state ?? queued.last(where: { $0.newState != nil })?.newState ?? start.state
        let terminated = lastState?.known == .terminated
        guard start.state != nil else {
            // Nothing says what state the call is in: it cannot be placed.
            return Result(events: [], direction: direction, terminated: terminated)
        }
        var events: [BackendEvent] = [.callAppeared(key, modem: modem, start.observation(direction: &direction),
                                                    initial: initial)]
        for update in queued {
            events.append(.callChanged(key, update.observation(direction: &direction)))
        }
        if let fetched, !queued.isEmpty {
            events.append(.callChanged(key, fetched.observation(direction: &direction)))
        }
        return Result(events: events, direction: direction, terminated: terminated)
    }

    private static func firstDirection(_ queued: [ModemManagerCallUpdate]) -> ModemManagerCallDirection? {
        for case let .properties(properties) in queued {
            if let direction = properties.direction { return direction }
        }
        return nil
    }
}
