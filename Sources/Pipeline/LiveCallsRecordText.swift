import CallMonitor

/// The `live-calls` record's text kept call by call, so that a turn that changes one call
/// encodes that call alone (its times' digits cost more than the rest of the turn), and a turn
/// that changes nothing the record holds writes nothing.
struct LiveCallsRecordText {
    private var places: [(call: RememberedCall, text: String)] = []
    /// The ids of the calls in `places`.
    private var ids: Set<String> = []

    /// The whole record, as `LiveCallsRecord.encode` makes it.
    var text: String {
        places.isEmpty ? "" : LiveCallsRecord.header + places.map(\.text).joined()
    }

    /// Whether a change to the call `id` may change the record. Live calls are listed in
    /// first-seen order: a call past a full record's places neither enters it nor moves its calls.
    func mayHold(_ id: String) -> Bool {
        places.count < LiveCallsRecord.limit || ids.contains(id)
    }

    /// Takes the live calls (first-seen order); whether the record changed.
    mutating func update(_ calls: [CallSnapshot]) -> Bool {
        let count = min(calls.count, LiveCallsRecord.limit)
        var changed = count != places.count
        for place in 0..<count {
            let call = RememberedCall(calls[place])
            if place < places.count {
                guard places[place].call != call else { continue }
                places[place] = (call, LiveCallsRecord.encode(call, at: place))
            } else {
                places.append((call, LiveCallsRecord.encode(call, at: place)))
            }
            changed = true
        }
        guard changed else { return false }
        places.removeSubrange(count...)
        ids = Set(places.map(\.call.id))
        return true
    }
}
