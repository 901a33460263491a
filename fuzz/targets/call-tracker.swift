// Fuzz target: the call tracker fed a random sequence of backend events.
//
// Each input byte string is read as a list of events over a few call paths, two modems and both
// stacks, with a small memory of ended calls so that forgetting is exercised too. Invariants, after
// every event: a call id is disconnected at most once and never changes state after that; a live
// call's transitions start from the state it was last reported in (a call whose whole life passed
// unseen during a sleep starts from the state it must have had); the live count is the number
// of calls started and not ended; live ids and keys are unique; what the tracker remembers stays
// bounded. At the end both stacks are lost: every call that started has been disconnected.

import CallMonitor

private struct Bytes {
    var rest: ArraySlice<UInt8>
    mutating func next() -> UInt8? { rest.popFirst() }
    mutating func pick<T>(_ choices: [T]) -> T? { next().map { choices[Int($0) % choices.count] } }
}

private let paths = ["/c0", "/c1", "/c2", "/m0/voicecall01", "/m1/voicecall01"]
private let modems = ["/m0", "/m1", ""]
private let numbers: [String?] = [nil, "", "+15551230001", "+15551230002", "'; rm -rf / \n\u{1b}[31m", "\u{0}x"]
private let phases: [CallPhase?] = [nil, .ended, .unknown("x")]
    + CallState.allCases.flatMap { state in CallDetail.allCases.map { CallPhase.live(state, $0) } }
private let memory = 4

private func observation(_ bytes: inout Bytes) -> CallObservation? {
    guard let phase = bytes.pick(phases), let direction = bytes.pick([nil] + CallDirection.allCases.map { $0 }),
          let number = bytes.pick(numbers), let flags = bytes.next()
    else { return nil }
    return CallObservation(phase: phase, direction: direction, number: number, name: flags & 1 == 0 ? nil : "N",
                           multiparty: flags & 2 == 0 ? nil : flags & 4 != 0,
                           reason: flags & 8 == 0 ? nil : "unknown", everConnected: flags & 16 == 0 ? nil : true)
}

private func event(_ bytes: inout Bytes) -> BackendEvent? {
    guard let kind = bytes.next(), let backend = bytes.pick(BackendKind.allCases), let path = bytes.pick(paths),
          let modem = bytes.pick(modems)
    else { return nil }
    let key = CallKey(backend: backend, path: path)
    let resumed = kind & 0x80 != 0
    let plain: BackendEvent
    switch kind % 7 {
    case 0: plain = .callAnnounced(key, modem: modem)
    case 1, 2:
        guard let seen = observation(&bytes) else { return nil }
        plain = .callAppeared(key, modem: modem, seen, initial: kind & 0x40 != 0)
    case 3, 4:
        guard let seen = observation(&bytes) else { return nil }
        plain = .callChanged(key, seen)
    case 5: plain = .callRemoved(key, reason: kind & 0x40 != 0 ? .removed : nil)
    default: plain = kind & 0x40 != 0 ? .backendLost(backend) : .modemRemoved(backend, modem: modem)
    }
    return resumed ? .learnedOnResume(plain) : plain
}

private struct Ledger {
    var state: [String: CallState] = [:]
    var ended: Set<String> = []
    var live: Int { state.count }

    mutating func record(_ events: [TrackerEvent]) {
        for case let .transition(call, previous) in events {
            precondition(!ended.contains(call.id), "call \(call.id) changed after it was disconnected")
            // A call that came and went while the system slept is told as one `disconnected` from
            // the state it must have started in, though it was never reported live.
            let unseen = call.lifeUnseen && state[call.id] == nil
            precondition(unseen || previous == state[call.id], "call \(call.id) went from \(String(describing: previous)), "
                         + "last reported \(String(describing: state[call.id]))")
            if call.state == .disconnected {
                ended.insert(call.id)
                state.removeValue(forKey: call.id)
            } else {
                state[call.id] = call.state
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var bytes = Bytes(rest: ArraySlice(UnsafeBufferPointer(start: data, count: size)))
    var counter = 0
    var tracker = CallTracker(makeID: { counter += 1; return "call\(counter)" }, endedMemory: memory)
    var ledger = Ledger()
    var time = 0.0
    while let event = event(&bytes) {
        time += Double(bytes.next() ?? 1) / 16
        ledger.record(tracker.apply(event, at: time))
        precondition(tracker.liveCount == ledger.live, "tracker has \(tracker.liveCount) live calls, "
                     + "its events say \(ledger.live)")
        let live = tracker.liveCalls
        precondition(Set(live.map(\.id)).count == live.count && Set(live.map(\.key)).count == live.count,
                     "two live calls share an id or a key")
        precondition(tracker.rememberedCount <= 3 * memory, "the tracker remembers \(tracker.rememberedCount) keys")
    }
    ledger.record(tracker.apply(.backendLost(.modemManager), at: time + 1))
    ledger.record(tracker.apply(.backendLost(.ofono), at: time + 2))
    precondition(tracker.liveCount == 0 && ledger.live == 0, "a call outlived both stacks")
    return 0
}
