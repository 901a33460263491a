import TestSupport
import XCTest
@testable import CallMonitor

// The tracker's reconciliation after a resume (`BackendEvent.learnedOnResume`), without a bus:
// what the resync found, against what was known before the sleep.

private func tracker() -> CallTracker {
    let ids = SequentialIDs()
    return CallTracker(makeID: { ids.next() })
}

/// As the ModemManager backend builds it from the call's properties.
private func mm(_ state: ModemManagerCallState, _ direction: ModemManagerCallDirection,
                reason: ModemManagerCallStateReason, number: String? = nil) -> CallObservation {
    var known = direction
    return ModemManagerCallProperties(state: state, reason: reason, direction: direction, number: number)
        .observation(direction: &known)
}

private func of(_ state: String, number: String? = nil) -> CallObservation {
    CallObservation(phase: OfonoMapping.phase(state), number: number)
}

/// What a resync after a resume reports for a call listed now.
private func listed(_ key: CallKey, _ observation: CallObservation) -> BackendEvent {
    .learnedOnResume(.callAppeared(key, modem: key.backend == .ofono ? ofModem : mmModem, observation, initial: true))
}

final class ResumeReconciliationTests: XCTestCase {
    func testALiveCallListedAgainUnchangedIsNotReportedTwice() {
        var t = tracker()
        XCTAssertEqual(describe(t.apply(.callAppeared(mmKey(0), modem: mmModem, mm(.active, .incoming, reason: .accepted),
                                                      initial: false), at: 1)),
                       ["id-1 new->connected.active", "busy id-1"])
        XCTAssertEqual(t.apply(listed(mmKey(0), mm(.active, .incoming, reason: .accepted)), at: 50), [])
        XCTAssertEqual(t.liveCalls.map(\.id), ["id-1"], "same call, same id")

        var o = tracker()
        _ = o.apply(.callAppeared(ofKey(1), modem: ofModem, of("active", number: "+1555"), initial: false), at: 1)
        XCTAssertEqual(o.apply(listed(ofKey(1), of("active", number: "+1555")), at: 50), [])
    }

    func testACallThatChangedWhileAsleepGetsOneResumedTransition() {
        var t = tracker()
        _ = t.apply(.callAppeared(mmKey(0), modem: mmModem, mm(.ringingIn, .incoming, reason: .incomingNew, number: "+1555"),
                                  initial: false), at: 1)
        let events = t.apply(listed(mmKey(0), mm(.active, .incoming, reason: .accepted, number: "+1555")), at: 50)
        XCTAssertEqual(describe(events), ["id-1 incoming->connected.active resumed"])
        XCTAssertEqual(events.first?.call?.connectedAt, 50, "connected when telwatch learned it")
        XCTAssertEqual(t.liveCalls.first?.resumed, false, "the flag belongs to the event, not the stored call")
        // The next change seen as it happens is not flagged.
        XCTAssertEqual(describe(t.apply(.callChanged(mmKey(0), mm(.held, .incoming, reason: .unknown)), at: 60)),
                       ["id-1 connected->connected.held"])
    }

    func testALiveCallListedEndedGetsExactlyOneDisconnected() {
        var t = tracker()
        _ = t.apply(.callAppeared(mmKey(0), modem: mmModem, mm(.active, .outgoing, reason: .outgoingStarted),
                                  initial: false), at: 1)
        XCTAssertEqual(describe(t.apply(listed(mmKey(0), mm(.terminated, .outgoing, reason: .terminated)), at: 50)),
                       ["id-1 connected->disconnected(terminated) resumed", "idle id-1 resumed"])
        // Listed again at the next resume, then deleted: no news.
        XCTAssertEqual(t.apply(listed(mmKey(0), mm(.terminated, .outgoing, reason: .terminated)), at: 90), [])
        XCTAssertEqual(t.apply(.learnedOnResume(.callRemoved(mmKey(0), reason: .removed)), at: 91), [])
        XCTAssertEqual(t.apply(.callRemoved(mmKey(0), reason: .removed), at: 92), [])
    }

    func testALiveCallGoneFromTheListingEndsOnceAndARingingOneIsMissed() {
        var t = tracker()
        _ = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("incoming", number: "+1555"), initial: false), at: 1)
        XCTAssertEqual(describe(t.apply(.learnedOnResume(.callRemoved(ofKey(1), reason: nil)), at: 50)),
                       ["id-1 incoming->disconnected(removed) resumed", "id-1 missed resumed", "idle id-1 resumed"])
        XCTAssertEqual(t.apply(.callRemoved(ofKey(1), reason: nil), at: 51), [])
    }

    func testATerminatedCallNeverSeenIsMissedAfterAResumeButHistoryAtStartUp() throws {
        var t = tracker()
        let found = mm(.terminated, .incoming, reason: .terminated, number: "+15559876")
        XCTAssertEqual(t.apply(.callAppeared(mmKey(0), modem: mmModem, found, initial: true), at: 1), [],
                       "at start-up a terminated call is history")

        let events = t.apply(listed(mmKey(1), found), at: 50)
        XCTAssertEqual(describe(events), ["id-1 incoming->disconnected(terminated) resumed", "id-1 missed resumed"],
                       "no busy/idle: it held nothing")
        let call = try XCTUnwrap(events[0].call)
        XCTAssertEqual(call.number, "+15559876")
        XCTAssertEqual(call.direction, .incoming)
        XCTAssertEqual(call.modem.eventValue, mmModem)
        XCTAssertFalse(call.initial)
        XCTAssertTrue(call.lifeUnseen)
        XCTAssertNil(call.connectedAt)
        XCTAssertEqual(t.liveCalls, [])
        XCTAssertEqual(t.apply(listed(mmKey(1), found), at: 90), [], "reported once")
    }

    func testAnOutgoingCallThatCameAndWentIsNotMissedNorIsATransferredOne() {
        var t = tracker()
        XCTAssertEqual(describe(t.apply(listed(mmKey(0), mm(.terminated, .outgoing, reason: .terminated)), at: 50)),
                       ["id-1 dialing->disconnected(terminated) resumed"])
        // Only a connected call can be transferred: ModemManager's reason says what telwatch did not see.
        XCTAssertEqual(describe(t.apply(listed(mmKey(1), mm(.terminated, .incoming, reason: .transferred)), at: 51)),
                       ["id-2 connected->disconnected(transferred) resumed"])
        XCTAssertEqual(describe(t.apply(listed(mmKey(2), mm(.terminated, .unknown, reason: .terminated)), at: 52)),
                       ["id-3 new->disconnected(terminated) resumed"], "no direction, no missed")
    }

    func testARingingCallTheBackendSaysWasConnectedIsNotMissed() {
        var t = tracker()
        _ = t.apply(.callAppeared(mmKey(0), modem: mmModem, mm(.ringingIn, .incoming, reason: .incomingNew),
                                  initial: false), at: 1)
        XCTAssertEqual(describe(t.apply(listed(mmKey(0), mm(.terminated, .incoming, reason: .transferred)), at: 50)),
                       ["id-1 incoming->disconnected(transferred) resumed", "idle id-1 resumed"])
    }

    func testACallFirstFoundLiveOnResumeStartsTheRunAndIsNotInitial() {
        var t = tracker()
        let events = t.apply(listed(mmKey(3), mm(.ringingIn, .incoming, reason: .incomingNew, number: "+1555")), at: 50)
        XCTAssertEqual(describe(events), ["id-1 new->incoming.ringing resumed", "busy id-1 resumed"])
        XCTAssertFalse(events[0].call?.initial ?? true, "initial means live at start")
        XCTAssertEqual(t.liveCalls.map(\.id), ["id-1"])
    }

    func testAnOfonoPathHandedToTheNextCallIsANewCallAndTheOldOneEndsAfterIt() {
        var t = tracker()
        _ = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("incoming", number: "+1555"), initial: false), at: 1)
        _ = t.apply(.callChanged(ofKey(1), of("active")), at: 2)
        // While asleep: hung up, and a new call rang on the freed path voicecall01.
        let events = t.apply(listed(ofKey(1), of("incoming", number: "+1666")), at: 50)
        XCTAssertEqual(describe(events), ["id-2 new->incoming.ringing resumed",
                                          "id-1 connected->disconnected(removed) resumed"],
                       "the new call first, so a run both hold goes on; no busy/idle")
        XCTAssertEqual(t.liveCalls.map(\.number), ["+1666"])
    }

    func testAnotherCallIsToldByStateDirectionOrNumber() {
        let connected = CallSnapshot(id: "a", key: ofKey(1), modem: ModemPath(ofModem), direction: .incoming, number: "+1555",
                                     state: .connected, detail: .active, firstSeen: 0, connectedAt: 1)
        func another(_ observation: CallObservation) -> Bool {
            guard case let .live(state, _)? = observation.phase else { return false }
            return CallTracker.isAnotherCall(connected, observation, state: state)
        }
        XCTAssertTrue(another(of("incoming")))
        XCTAssertTrue(another(of("dialing")))
        XCTAssertTrue(another(of("active", number: "+1666")))
        XCTAssertTrue(another(CallObservation(phase: .live(.connected, .held), direction: .outgoing)))
        XCTAssertFalse(another(of("held", number: "+1555")))
        XCTAssertFalse(another(of("active", number: "")), "a number not known is no other number")
        XCTAssertFalse(another(of("active")))
    }

    func testDisconnectedExactlyOnceWhicheverCauseComesFirstAcrossAResume() {
        let causes: [(CallKey) -> BackendEvent] = [
            { listed($0, of("disconnected")) },
            { .learnedOnResume(.callRemoved($0, reason: nil)) },
            { .callChanged($0, of("disconnected")) },
            { .callRemoved($0, reason: nil) },
            { _ in .learnedOnResume(.backendLost(.ofono)) },
            { _ in .learnedOnResume(.modemRemoved(.ofono, modem: ofModem)) },
        ]
        for (i, first) in causes.enumerated() {
            var t = tracker()
            _ = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("active"), initial: false), at: 0)
            var disconnects = 0
            for cause in [first] + causes {
                // Once the object is gone (removed, backend or modem lost), a later listing of the
                // path as ended is another call that came and went: only id-1 counts here.
                for case let .transition(s, _) in t.apply(cause(ofKey(1)), at: 1)
                where s.id == "id-1" && s.state == .disconnected {
                    disconnects += 1
                }
            }
            XCTAssertEqual(disconnects, 1, "first cause #\(i)")
            XCTAssertEqual(t.liveCalls, [])
        }
    }

    /// Random mixes of signals and resume findings on a few reused paths keep the tracker's promises:
    /// one `disconnected` per call and nothing after it, `busy`/`idle` alternating with the live count.
    func testRandomMixesOfSignalsAndResumeFindingsKeepThePromises() {
        var generator = SplitMix(seed: 8)
        let states = ["incoming", "waiting", "dialing", "alerting", "active", "held", "disconnected"]
        for round in 0..<300 {
            var t = tracker()
            var ended: Set<String> = []
            var live: Set<String> = []
            var busy = false
            for step in 0..<40 {
                let key = ofKey(Int(generator.next() % 3) + 1)
                let state = states[Int(generator.next() % UInt64(states.count))]
                let number = ["", "+1", "+2"][Int(generator.next() % 3)]
                let event: BackendEvent
                switch generator.next() % 6 {
                case 0: event = .callAppeared(key, modem: ofModem, of(state, number: number), initial: false)
                case 1: event = .callChanged(key, of(state))
                case 2: event = .callRemoved(key, reason: nil)
                case 3: event = .learnedOnResume(.callRemoved(key, reason: nil))
                case 4: event = .learnedOnResume(.backendLost(.ofono))
                default: event = listed(key, of(state, number: number))
                }
                let where_ = "round \(round) step \(step) \(event)"
                let endedBefore = ended
                for output in t.apply(event, at: Double(step)) {
                    guard let id = output.call?.id else { return XCTFail("an announcement on resume: \(where_)") }
                    // Its missed and idle come in the same batch as its disconnected, never later.
                    XCTAssertFalse(endedBefore.contains(id), "an event after the end of \(id): \(where_)")
                    if case let .transition(call, _) = output, call.state == .disconnected {
                        XCTAssertFalse(ended.contains(id), "a second disconnected of \(id): \(where_)")
                    }
                    switch output {
                    case let .transition(call, _):
                        if call.state == .disconnected { ended.insert(id); live.remove(id) } else { live.insert(id) }
                    case .missed: break
                    case .updated: XCTAssertTrue(live.contains(id), where_)
                    case .busy: XCTAssertFalse(busy, where_); busy = true
                    case .idle: XCTAssertTrue(busy, where_); busy = false
                    case .announced, .withdrawn: break
                    }
                    if case .missed = output { XCTAssertTrue(ended.contains(id), where_) }
                }
                XCTAssertEqual(Set(t.liveCalls.map(\.id)), live, where_)
                XCTAssertEqual(busy, !live.isEmpty, where_)
            }
        }
    }

    func testEveryEventOfAResumeIsFlaggedAndOnlyThose() {
        var t = tracker()
        _ = t.apply(.callAppeared(mmKey(0), modem: mmModem, mm(.active, .incoming, reason: .accepted),
                                  initial: false), at: 1)
        _ = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.active, .outgoing, reason: .outgoingStarted),
                                  initial: false), at: 1)
        let lost = t.apply(.learnedOnResume(.modemRemoved(.modemManager, modem: mmModem)), at: 50)
        XCTAssertEqual(describe(lost), ["id-1 connected->disconnected(modem-removed) resumed",
                                        "id-2 connected->disconnected(modem-removed) resumed", "idle id-2 resumed"])
        let nested = t.apply(.learnedOnResume(.learnedOnResume(.callAppeared(
            mmKey(5), modem: mmModem, mm(.dialing, .outgoing, reason: .outgoingStarted), initial: true))), at: 60)
        XCTAssertEqual(describe(nested), ["id-3 new->dialing.dialing resumed", "busy id-3 resumed"])
    }
}
