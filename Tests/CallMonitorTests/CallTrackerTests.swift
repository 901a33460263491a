import TestSupport
import XCTest
@testable import CallMonitor

private func makeTracker(endedMemory: Int = CallTracker.defaultEndedMemory) -> CallTracker {
    let ids = SequentialIDs()
    return CallTracker(makeID: { ids.next() }, endedMemory: endedMemory)
}

/// ModemManager observation, as the backend would build it.
private func mm(_ state: ModemManagerCallState, _ direction: ModemManagerCallDirection = .unknown,
                reason: ModemManagerCallStateReason? = nil, number: String? = nil) -> CallObservation {
    mm(ModemManagerValue(state), direction, reason.map { ModemManagerValue($0) }, number)
}

/// A state the daemon does not define, as it came.
private func mm(rawState: Int32, _ direction: ModemManagerCallDirection) -> CallObservation {
    mm(ModemManagerValue(raw: rawState), direction, nil, nil)
}

/// A reason the daemon does not define, as it came.
private func mm(_ state: ModemManagerCallState, _ direction: ModemManagerCallDirection,
                rawReason: Int32) -> CallObservation {
    mm(ModemManagerValue(state), direction, ModemManagerValue(raw: rawReason), nil)
}

private func mm(_ state: ModemManagerValue<ModemManagerCallState>, _ direction: ModemManagerCallDirection,
                _ reason: ModemManagerValue<ModemManagerCallStateReason>?, _ number: String?) -> CallObservation {
    CallObservation(
        phase: ModemManagerMapping.phase(state: state, direction: direction),
        direction: ModemManagerMapping.direction(direction),
        number: number,
        reason: reason.map { ModemManagerMapping.reason($0) }
    )
}

/// oFono observation from a raw State string (oFono has no direction).
private func of(_ state: String, number: String? = nil, name: String? = nil) -> CallObservation {
    CallObservation(phase: OfonoMapping.phase(state), number: number, name: name)
}

private func snapshots(_ events: [TrackerEvent]) -> [CallSnapshot] {
    events.compactMap(\.call)
}

final class CallTrackerTests: XCTestCase {

    // MARK: - Everyday scenarios

    func testIncomingAnsweredThenRemoteHangUp() {
        var t = makeTracker()
        let key = mmKey(1)
        var ev = t.apply(.callAppeared(key, modem: mmModem,
                                       mm(.ringingIn, .incoming, reason: .incomingNew, number: "+15551234"),
                                       initial: false), at: 100)
        XCTAssertEqual(describe(ev), ["id-1 new->incoming.ringing", "busy id-1"])
        let first = snapshots(ev)[0]
        XCTAssertEqual(first.direction, .incoming)
        XCTAssertEqual(first.number, "+15551234")
        XCTAssertEqual(first.modem.eventValue, mmModem)
        XCTAssertEqual(first.reason?.word, "incoming-new")
        XCTAssertEqual(first.firstSeen, 100)
        XCTAssertNil(first.connectedAt)
        XCTAssertFalse(first.initial)

        ev = t.apply(.callChanged(key, mm(.active, .incoming, reason: .accepted)), at: 105)
        XCTAssertEqual(describe(ev), ["id-1 incoming->connected.active"])
        XCTAssertEqual(t.call(key)?.connectedAt, 105)
        XCTAssertEqual(t.call(key)?.reason?.word, "accepted")

        // ModemManager follows StateChanged with PropertiesChanged carrying the same state.
        XCTAssertEqual(t.apply(.callChanged(key, mm(.active, .incoming, reason: .accepted)), at: 105.01), [])

        ev = t.apply(.callChanged(key, mm(.terminated, .incoming, reason: .terminated)), at: 160)
        XCTAssertEqual(describe(ev), ["id-1 connected->disconnected(terminated)", "idle id-1"])
        let last = snapshots(ev)[0]
        XCTAssertNil(last.detail)
        XCTAssertEqual(last.endedAt, 160)
        XCTAssertEqual(last.connectedAt, 105)
        XCTAssertTrue(last.everConnected)
        XCTAssertEqual(last.firstSeen, 100)
        XCTAssertEqual(last.number, "+15551234")
        XCTAssertEqual(t.liveCalls, [])
        XCTAssertNil(t.call(key))

        XCTAssertEqual(t.apply(.callRemoved(key, reason: nil), at: 170), [])
        XCTAssertEqual(t.rememberedCount, 0)
    }

    func testIncomingMissedOnOfono() {
        var t = makeTracker()
        let key = ofKey(1)
        var ev = t.apply(.callAppeared(key, modem: ofModem, of("incoming", number: "+15550000"), initial: false), at: 1)
        XCTAssertEqual(describe(ev), ["id-1 new->incoming.ringing", "busy id-1"])
        XCTAssertEqual(t.call(key)?.direction, .incoming, "direction inferred from first state")

        // oFono sends DisconnectReason just before State goes to "disconnected": stored, no event.
        ev = t.apply(.callChanged(key, CallObservation(reason: OfonoMapping.disconnectReason("remote"))), at: 20)
        XCTAssertEqual(ev, [])
        ev = t.apply(.callChanged(key, of("disconnected")), at: 20)
        XCTAssertEqual(describe(ev), ["id-1 incoming->disconnected(remote)", "id-1 missed", "idle id-1"])
        let missed = snapshots(ev)[1]
        XCTAssertFalse(missed.everConnected)
        XCTAssertEqual(missed.number, "+15550000")
        XCTAssertEqual(missed.endedAt, 20)

        XCTAssertEqual(t.apply(.callRemoved(key, reason: nil), at: 20.1), [])
        XCTAssertEqual(t.rememberedCount, 0)
    }

    func testIncomingRejectedIsMissedWithItsReason() {
        // telwatch is passive: a rejected call is an incoming call that never connected, so it
        // is reported as missed too; the reason tells the two apart.
        var t = makeTracker()
        let key = mmKey(4)
        _ = t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming, reason: .incomingNew),
                                  initial: false), at: 0)
        let ev = t.apply(.callChanged(key, mm(.terminated, .incoming, reason: .refusedOrBusy)), at: 3)
        XCTAssertEqual(describe(ev), ["id-1 incoming->disconnected(refused-or-busy)", "id-1 missed", "idle id-1"])
    }

    func testOutgoingDialingAlertingConnectedHangUpOnOfono() {
        var t = makeTracker()
        let key = ofKey(2)
        var ev = t.apply(.callAppeared(key, modem: ofModem, of("dialing", number: "+15559999"), initial: false), at: 10)
        XCTAssertEqual(describe(ev), ["id-1 new->dialing.dialing", "busy id-1"])
        XCTAssertEqual(t.call(key)?.direction, .outgoing)

        ev = t.apply(.callChanged(key, of("alerting")), at: 11)
        XCTAssertEqual(describe(ev), ["id-1 dialing->dialing.alerting"], "a detail change is a transition")
        ev = t.apply(.callChanged(key, of("active")), at: 15)
        XCTAssertEqual(describe(ev), ["id-1 dialing->connected.active"])
        XCTAssertEqual(t.call(key)?.connectedAt, 15)

        // Local hang-up; oFono removes the object without a "disconnected" PropertyChanged here.
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation(reason: "local")), at: 40), [])
        ev = t.apply(.callRemoved(key, reason: nil), at: 40)
        XCTAssertEqual(describe(ev), ["id-1 connected->disconnected(local)", "idle id-1"])
        XCTAssertEqual(snapshots(ev)[0].direction, .outgoing)
    }

    func testOutgoingBusyIsNotMissed() {
        var t = makeTracker()
        let key = mmKey(2)
        var ev = t.apply(.callAppeared(key, modem: mmModem,
                                       mm(.dialing, .outgoing, reason: .outgoingStarted, number: "+1555"),
                                       initial: false), at: 0)
        XCTAssertEqual(describe(ev), ["id-1 new->dialing.dialing", "busy id-1"])
        ev = t.apply(.callChanged(key, mm(.ringingOut, .outgoing)), at: 2)
        XCTAssertEqual(describe(ev), ["id-1 dialing->dialing.alerting"])
        ev = t.apply(.callChanged(key, mm(.terminated, .outgoing, reason: .refusedOrBusy)), at: 4)
        XCTAssertEqual(describe(ev), ["id-1 dialing->disconnected(refused-or-busy)", "idle id-1"])
    }

    func testSecondCallWaitingThenHeldAndSwappedFiresBusyAndIdleOnce() {
        var t = makeTracker()
        let a = ofKey(1), b = ofKey(2)
        var all: [TrackerEvent] = []
        func step(_ e: BackendEvent, _ time: Double) -> [String] {
            let ev = t.apply(e, at: time)
            all += ev
            return describe(ev)
        }
        XCTAssertEqual(step(.callAppeared(a, modem: ofModem, of("incoming", number: "+1111"), initial: false), 0),
                       ["id-1 new->incoming.ringing", "busy id-1"])
        XCTAssertEqual(step(.callChanged(a, of("active")), 2), ["id-1 incoming->connected.active"])
        XCTAssertEqual(step(.callAppeared(b, modem: ofModem, of("waiting", number: "+2222"), initial: false), 10),
                       ["id-2 new->incoming.waiting"])
        XCTAssertEqual(t.call(b)?.direction, .incoming)
        XCTAssertEqual(t.liveCalls.map(\.id), ["id-1", "id-2"])

        // The user swaps: A on hold, B answered.
        XCTAssertEqual(step(.callChanged(a, of("held")), 12), ["id-1 connected->connected.held"])
        XCTAssertEqual(step(.callChanged(b, of("active")), 12), ["id-2 incoming->connected.active"])
        // And back again.
        XCTAssertEqual(step(.callChanged(b, of("held")), 20), ["id-2 connected->connected.held"])
        XCTAssertEqual(step(.callChanged(a, of("active")), 20), ["id-1 connected->connected.active"])
        XCTAssertEqual(t.call(a)?.connectedAt, 2, "connectedAt is the first time only")
        XCTAssertEqual(t.call(b)?.connectedAt, 12)

        XCTAssertEqual(step(.callChanged(a, CallObservation(reason: "remote")), 30), [])
        XCTAssertEqual(step(.callChanged(a, of("disconnected")), 30), ["id-1 connected->disconnected(remote)"])
        XCTAssertEqual(t.liveCalls.map(\.id), ["id-2"])
        XCTAssertEqual(step(.callRemoved(a, reason: nil), 30), [])
        XCTAssertEqual(step(.callChanged(b, of("active")), 31), ["id-2 connected->connected.active"])
        XCTAssertEqual(step(.callChanged(b, of("disconnected")), 50), ["id-2 connected->disconnected(-)", "idle id-2"])

        let busy = all.filter { if case .busy = $0 { return true } else { return false } }
        let idle = all.filter { if case .idle = $0 { return true } else { return false } }
        let missed = all.filter { if case .missed = $0 { return true } else { return false } }
        XCTAssertEqual(busy.count, 1)
        XCTAssertEqual(idle.count, 1)
        XCTAssertEqual(missed.count, 0)
    }

    func testInitialCallsAreMarkedAndStayInitial() {
        var t = makeTracker()
        let key = ofKey(1)
        var ev = t.apply(.callAppeared(key, modem: ofModem, of("active", number: "+1"), initial: true), at: 500)
        XCTAssertEqual(describe(ev), ["id-1 new->connected.active", "busy id-1"])
        let s = snapshots(ev)[0]
        XCTAssertTrue(s.initial)
        XCTAssertEqual(s.direction, .unknown, "active at first sight says nothing about direction")
        XCTAssertEqual(s.connectedAt, 500)

        // A resync lists it again, unchanged: nothing. Listed with a new state: a transition of
        // the same call, not a new call.
        XCTAssertEqual(t.apply(.callAppeared(key, modem: ofModem, of("active", number: "+1"), initial: true), at: 600), [])
        ev = t.apply(.callAppeared(key, modem: ofModem, of("held"), initial: true), at: 601)
        XCTAssertEqual(describe(ev), ["id-1 connected->connected.held"])

        ev = t.apply(.callChanged(key, of("disconnected")), at: 700)
        XCTAssertEqual(describe(ev), ["id-1 connected->disconnected(-)", "idle id-1"])
        XCTAssertTrue(snapshots(ev).allSatisfy(\.initial))

        // A call found later by a non-initial CallAdded is not initial.
        ev = t.apply(.callAppeared(ofKey(2), modem: ofModem, of("incoming"), initial: false), at: 800)
        XCTAssertFalse(snapshots(ev)[0].initial)
        // …and a resync that lists it with initial: true does not make it initial.
        _ = t.apply(.callAppeared(ofKey(2), modem: ofModem, of("incoming"), initial: true), at: 801)
        XCTAssertEqual(t.call(ofKey(2))?.initial, false)
    }

    // MARK: - Calls an earlier telwatch left live

    /// What the last telwatch's record says: a call answered at 105, first seen at 100.
    private func leftLive(_ key: CallKey, number: String = "+15551234", direction: CallDirection = .incoming,
                          state: CallState = .connected) -> RememberedCall {
        RememberedCall(id: "earlier-id", key: key, direction: direction, number: number, state: state,
                       firstSeen: 100, connectedAt: state == .connected ? 105 : nil)
    }

    func testACallFoundLiveAtStartThatAnEarlierTelwatchKnewKeepsItsIDFirstSightAndAnswer() {
        var t = makeTracker()
        t.remember([leftLive(mmKey(1))])
        var ev = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.active, .incoming, number: "+15551234"),
                                       initial: true), at: 500)
        XCTAssertEqual(describe(ev), ["earlier-id new->connected.active", "busy earlier-id"])
        let found = snapshots(ev)[0]
        XCTAssertEqual(found.firstSeen, 100)
        XCTAssertEqual(found.connectedAt, 105, "answered when it was, not when this telwatch looked")
        XCTAssertTrue(found.initial, "live when this telwatch started")
        ev = t.apply(.callChanged(mmKey(1), mm(.terminated, .incoming, reason: .terminated)), at: 600)
        XCTAssertEqual(snapshots(ev)[0].duration, 495, "talk time from the real answer")
        XCTAssertFalse(snapshots(ev)[0].missed)
    }

    func testARingingCallFoundAgainWithoutItsNumberKeepsTheNumberAndIsMissedIfNeverAnswered() {
        var t = makeTracker()
        t.remember([leftLive(ofKey(1), state: .incoming)])
        var ev = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("incoming"), initial: true), at: 500)
        XCTAssertEqual(snapshots(ev)[0].id, "earlier-id")
        XCTAssertEqual(snapshots(ev)[0].number, "+15551234")
        XCTAssertNil(snapshots(ev)[0].connectedAt)
        ev = t.apply(.callChanged(ofKey(1), of("disconnected")), at: 510)
        XCTAssertEqual(describe(ev), ["earlier-id incoming->disconnected(-)", "earlier-id missed", "idle earlier-id"])
    }

    func testACallAnsweredWhileNoTelwatchLookedIsAnsweredWhenFound() {
        var t = makeTracker()
        t.remember([leftLive(mmKey(1), state: .incoming)])
        let ev = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.active, .incoming), initial: true), at: 500)
        XCTAssertEqual(snapshots(ev)[0].id, "earlier-id")
        XCTAssertEqual(snapshots(ev)[0].connectedAt, 500)
    }

    func testAnotherCallOnARememberedPathGetsANewID() {
        // The stack reuses a freed path: another number, another direction, or a state no call
        // goes back to is another call.
        let found: [(RememberedCall, CallObservation)] = [
            (leftLive(mmKey(1)), mm(.active, .incoming, number: "+15559999")),
            (leftLive(mmKey(1)), mm(.active, .outgoing, number: "+15551234")),
            (leftLive(mmKey(1)), mm(.ringingIn, .incoming, number: "+15551234")),
            (leftLive(mmKey(1), state: .incoming), mm(.dialing, .outgoing)),
        ]
        for (earlier, observation) in found {
            var t = makeTracker()
            t.remember([earlier])
            let ev = t.apply(.callAppeared(mmKey(1), modem: mmModem, observation, initial: true), at: 500)
            XCTAssertEqual(snapshots(ev).first?.id, "id-1", "\(observation)")
            XCTAssertEqual(snapshots(ev).first?.firstSeen, 500)
        }
    }

    func testOnlyTheStartsSyncFindsARememberedCall() {
        // A call the sync does not list, first seen by its own signal, is another one.
        var t = makeTracker()
        t.remember([leftLive(mmKey(1)), leftLive(ofKey(1))])
        var ev = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.active, .incoming, number: "+15551234"),
                                       initial: false), at: 500)
        XCTAssertEqual(snapshots(ev).first?.id, "id-1")
        // Once a stack's sync is done, what it did not find is forgotten; the other stack's is not.
        t.forgetRemembered(of: .ofono)
        ev = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("active", number: "+15551234"), initial: true), at: 501)
        XCTAssertEqual(snapshots(ev).first?.id, "id-2")
        _ = t.apply(.callRemoved(mmKey(1), reason: nil), at: 502)
        ev = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.active, .incoming, number: "+15551234"),
                                   initial: true), at: 503)
        XCTAssertEqual(snapshots(ev).first?.id, "earlier-id", "still remembered: ModemManager's sync is not done")
    }

    func testTerminatedCallAtSyncIsHistory() {
        var t = makeTracker()
        let key = mmKey(0)
        XCTAssertEqual(t.apply(.callAppeared(key, modem: mmModem, mm(.terminated, .incoming, reason: .terminated),
                                             initial: true), at: 0), [])
        XCTAssertEqual(t.liveCalls, [])
        XCTAssertNil(t.call(key))
        // Later observations on it do nothing, even a stray live-looking one.
        XCTAssertEqual(t.apply(.callChanged(key, mm(.terminated, .incoming)), at: 1), [])
        XCTAssertEqual(t.apply(.callChanged(key, mm(.ringingIn, .incoming)), at: 1), [])
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation(number: "+1")), at: 1), [])
        XCTAssertEqual(t.apply(.callRemoved(key, reason: nil), at: 2), [])
        XCTAssertEqual(t.apply(.backendLost(.modemManager), at: 3), [])
        XCTAssertEqual(t.rememberedCount, 0)
    }

    func testBackendLostMidCall() {
        var t = makeTracker()
        _ = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.active, .outgoing), initial: false), at: 0)
        _ = t.apply(.callAppeared(mmKey(2), modem: mmModem, mm(.waiting, .incoming), initial: false), at: 1)
        _ = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("active"), initial: false), at: 2)
        // An ended MM call not yet deleted is forgotten with the backend.
        _ = t.apply(.callAppeared(mmKey(9), modem: mmModem, mm(.terminated), initial: true), at: 2)

        var ev = t.apply(.backendLost(.modemManager), at: 10)
        XCTAssertEqual(describe(ev), [
            "id-1 connected->disconnected(backend-lost)",
            "id-2 incoming->disconnected(backend-lost)", "id-2 missed",
        ], "other backend's call keeps the phone busy: no idle")
        XCTAssertEqual(t.liveCalls.map(\.id), ["id-3"])
        XCTAssertEqual(snapshots(ev).map(\.endedAt), [10, 10, 10])

        // The objects are gone: stale signals do nothing; a restarted ModemManager reuses paths
        // and its calls are new calls.
        XCTAssertEqual(t.apply(.callChanged(mmKey(1), mm(.terminated, .outgoing)), at: 11), [])
        XCTAssertEqual(t.apply(.callRemoved(mmKey(2), reason: nil), at: 11), [])
        ev = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.ringingIn, .incoming), initial: true), at: 12)
        XCTAssertEqual(describe(ev), ["id-4 new->incoming.ringing"])

        ev = t.apply(.backendLost(.ofono), at: 13)
        XCTAssertEqual(describe(ev), ["id-3 connected->disconnected(backend-lost)"])
        ev = t.apply(.backendLost(.modemManager), at: 14)
        XCTAssertEqual(describe(ev), ["id-4 incoming->disconnected(backend-lost)", "id-4 missed", "idle id-4"])
        XCTAssertEqual(t.rememberedCount, 0)
        XCTAssertEqual(t.apply(.backendLost(.modemManager), at: 15), [], "nothing live: nothing to end")
    }

    func testModemRemovedEndsOnlyThatModemsCalls() {
        var t = makeTracker()
        let other = "/org/freedesktop/ModemManager1/Modem/1"
        _ = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.active, .outgoing), initial: false), at: 0)
        _ = t.apply(.callAppeared(mmKey(2), modem: other, mm(.active, .incoming), initial: false), at: 1)
        _ = t.apply(.callAppeared(mmKey(3), modem: other, mm(.terminated), initial: true), at: 1)
        XCTAssertEqual(t.rememberedCount, 1)

        var ev = t.apply(.modemRemoved(.modemManager, modem: other), at: 5)
        XCTAssertEqual(describe(ev), ["id-2 connected->disconnected(modem-removed)"])
        XCTAssertEqual(t.rememberedCount, 0)
        XCTAssertEqual(t.apply(.modemRemoved(.ofono, modem: mmModem), at: 6), [], "same path, other backend")
        ev = t.apply(.modemRemoved(.modemManager, modem: mmModem), at: 7)
        XCTAssertEqual(describe(ev), ["id-1 connected->disconnected(modem-removed)", "idle id-1"])
    }

    /// A call object announced on a modem that then goes is withdrawn with it (its run is let go),
    /// and only that modem's: an announcement elsewhere, or on an unnamed modem, stays.
    func testModemRemovedWithdrawsOnlyThatModemsAnnouncedCalls() {
        var t = makeTracker()
        let other = "/org/freedesktop/ModemManager1/Modem/1"
        XCTAssertEqual(describe(t.apply(.callAnnounced(mmKey(1), modem: mmModem), at: 0)), ["id-1 announced \(mmKey(1).path)"])
        _ = t.apply(.callAnnounced(mmKey(2), modem: other), at: 1)
        _ = t.apply(.callAnnounced(mmKey(3), modem: ""), at: 1)
        XCTAssertEqual(t.announcedCount, 3)

        XCTAssertEqual(t.apply(.modemRemoved(.ofono, modem: other), at: 2), [], "same path, other backend")
        XCTAssertEqual(describe(t.apply(.modemRemoved(.modemManager, modem: other), at: 3)),
                       ["id-2 withdrawn \(mmKey(2).path)"])
        XCTAssertEqual(t.announcedCount, 2)
        _ = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.ringingIn, .incoming), initial: false), at: 4)
        XCTAssertEqual(t.announcedCount, 1, "a call known now is no longer announced")
    }

    func testPathReusedForANewCallGetsANewID() {
        var t = makeTracker()
        let key = ofKey(1)
        // oFono names back-to-back calls voicecall01 again.
        _ = t.apply(.callAppeared(key, modem: ofModem, of("incoming"), initial: false), at: 0)
        _ = t.apply(.callChanged(key, of("disconnected")), at: 1)
        _ = t.apply(.callRemoved(key, reason: nil), at: 1)
        var ev = t.apply(.callAppeared(key, modem: ofModem, of("dialing"), initial: false), at: 2)
        XCTAssertEqual(describe(ev), ["id-2 new->dialing.dialing", "busy id-2"])
        XCTAssertEqual(snapshots(ev)[0].direction, .outgoing, "nothing inherited from the old call")
        XCTAssertEqual(snapshots(ev)[0].firstSeen, 2)

        // ModemManager: ended but never deleted, then the path is listed again with a new call.
        let mkey = mmKey(1)
        _ = t.apply(.callAppeared(mkey, modem: mmModem, mm(.ringingIn, .incoming), initial: false), at: 3)
        _ = t.apply(.callChanged(mkey, mm(.terminated, .incoming)), at: 4)
        ev = t.apply(.callAppeared(mkey, modem: mmModem, mm(.dialing, .outgoing), initial: false), at: 5)
        XCTAssertEqual(describe(ev), ["id-4 new->dialing.dialing"])

        // A live signal after a removal (the CallAdded/GetProperties not in yet) starts a new call.
        _ = t.apply(.callRemoved(key, reason: .stack("local")), at: 6)
        ev = t.apply(.callChanged(key, of("incoming", number: "+3")), at: 7)
        XCTAssertEqual(describe(ev), ["id-5 new->incoming.ringing"])
        let s = snapshots(ev)[0]
        XCTAssertFalse(s.initial)
        XCTAssertEqual(s.modem, .unknown, "a signal does not name the modem")
        XCTAssertEqual(s.number, "+3")
        // The CallAdded that follows is an update of that call and fills in the modem.
        XCTAssertEqual(t.apply(.callAppeared(key, modem: ofModem, of("incoming", number: "+3"), initial: false), at: 7), [])
        XCTAssertEqual(t.call(key)?.modem.eventValue, ofModem)
        XCTAssertEqual(t.call(key)?.id, "id-5")
    }

    func testLateNumberIsAnUpdateNotANewCall() {
        var t = makeTracker()
        let key = mmKey(1)
        // A bare RING before +CLIP: no number yet.
        _ = t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming, number: ""), initial: false), at: 0)
        XCTAssertEqual(t.call(key)?.number, "")
        var ev = t.apply(.callChanged(key, CallObservation(number: "+15551234")), at: 0.5)
        XCTAssertEqual(describe(ev), ["id-1 updated"])
        XCTAssertEqual(snapshots(ev)[0].number, "+15551234")
        XCTAssertEqual(snapshots(ev)[0].state, .incoming)
        // Same number again: nothing. An empty number never erases a known one.
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation(number: "+15551234")), at: 0.6), [])
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation(number: "")), at: 0.7), [])
        XCTAssertEqual(t.call(key)?.number, "+15551234")

        // Name and multiparty are updates too; several fields at once are one update.
        ev = t.apply(.callChanged(key, CallObservation(name: "Alice", multiparty: true)), at: 1)
        XCTAssertEqual(describe(ev), ["id-1 updated"])
        XCTAssertEqual(t.call(key)?.name, "Alice")
        XCTAssertEqual(t.call(key)?.multiparty, true)
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation(multiparty: true)), at: 1.1), [])

        // oFono's "withheld" is a value, kept as is.
        let okey = ofKey(1)
        _ = t.apply(.callAppeared(okey, modem: ofModem, of("waiting"), initial: false), at: 2)
        ev = t.apply(.callChanged(okey, CallObservation(number: "withheld")), at: 2.1)
        XCTAssertEqual(describe(ev), ["id-2 updated"])
        XCTAssertEqual(t.call(okey)?.number, "withheld")

        // A number arriving with a state change rides on the transition: no separate update.
        ev = t.apply(.callChanged(key, mm(.active, .incoming, number: "+15550000")), at: 3)
        XCTAssertEqual(describe(ev), ["id-1 incoming->connected.active"])
        XCTAssertEqual(snapshots(ev)[0].number, "+15550000")
    }

    func testRepeatedSameStateEmitsNothing() {
        var t = makeTracker()
        let key = mmKey(1)
        _ = t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming, reason: .incomingNew),
                                  initial: false), at: 0)
        for i in 0..<5 {
            XCTAssertEqual(t.apply(.callChanged(key, mm(.ringingIn, .incoming, reason: .incomingNew)), at: Double(i)), [])
        }
        // A reason alone is no event either (it shows in the next event).
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation(reason: "something")), at: 6), [])
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation()), at: 6), [])
        XCTAssertEqual(t.call(key)?.reason?.word, "something")
    }

    func testUnknownStateIsNeverATransition() {
        var t = makeTracker()
        let key = mmKey(1)
        _ = t.apply(.callAppeared(key, modem: mmModem, mm(.active, .incoming), initial: false), at: 0)
        XCTAssertEqual(t.apply(.callChanged(key, mm(rawState: 42, .incoming)), at: 1), [])
        XCTAssertEqual(t.apply(.callChanged(key, mm(.unknown, .incoming)), at: 1), [])
        XCTAssertEqual(t.apply(.callChanged(ofKey(1), of("ringing")), at: 1), [], "unknown key, unknown state")
        XCTAssertEqual(t.call(key)?.state, .connected)
        XCTAssertEqual(t.call(key)?.detail, .active)
        // Other fields in the same observation still count.
        let ev = t.apply(.callChanged(key, CallObservation(phase: .unknown("x"), number: "+9")), at: 2)
        XCTAssertEqual(describe(ev), ["id-1 updated"])
        XCTAssertEqual(snapshots(ev)[0].state, .connected)
    }

    func testCallAppearingWithUnknownStateIsTrackedOnceAKnownStateArrives() {
        var t = makeTracker()
        let key = mmKey(5)
        XCTAssertEqual(t.apply(.callAppeared(key, modem: mmModem, mm(.unknown, .incoming, number: "+77"),
                                             initial: true), at: 0), [])
        XCTAssertEqual(t.liveCalls, [])
        XCTAssertNil(t.call(key))
        XCTAssertEqual(t.apply(.callChanged(key, mm(rawState: 99, .incoming)), at: 1), [])
        let ev = t.apply(.callChanged(key, CallObservation(phase: .live(.incoming, .ringing))), at: 2)
        XCTAssertEqual(describe(ev), ["id-1 new->incoming.ringing", "busy id-1"])
        let s = snapshots(ev)[0]
        XCTAssertEqual(s.modem.eventValue, mmModem, "remembered from the appearance")
        XCTAssertTrue(s.initial)
        XCTAssertEqual(s.number, "+77")
        XCTAssertEqual(s.direction, .incoming)
        XCTAssertEqual(s.firstSeen, 2, "first sight as a call is when a known state arrived")

        // An unknown appearance that then ends is history; one that is removed is forgotten.
        _ = t.apply(.callAppeared(mmKey(6), modem: mmModem, mm(.unknown), initial: false), at: 3)
        XCTAssertEqual(t.apply(.callChanged(mmKey(6), mm(.terminated)), at: 4), [])
        XCTAssertEqual(t.apply(.callChanged(mmKey(6), mm(.ringingIn, .incoming)), at: 5), [])
        _ = t.apply(.callAppeared(mmKey(7), modem: mmModem, CallObservation(), initial: false), at: 3)
        XCTAssertEqual(t.rememberedCount, 2)
        XCTAssertEqual(t.apply(.callRemoved(mmKey(7), reason: nil), at: 4), [])
        XCTAssertEqual(t.apply(.callRemoved(mmKey(6), reason: nil), at: 4), [])
        XCTAssertEqual(t.rememberedCount, 0)
    }

    // MARK: - Rules one by one

    func testDisconnectedExactlyOnceWhicheverCauseComesFirst() {
        let causes: [(CallKey) -> BackendEvent] = [
            { .callChanged($0, of("disconnected")) },
            { .callRemoved($0, reason: nil) },
            { _ in .backendLost(.ofono) },
            { _ in .modemRemoved(.ofono, modem: ofModem) },
        ]
        for (i, first) in causes.enumerated() {
            var t = makeTracker()
            let key = ofKey(1)
            _ = t.apply(.callAppeared(key, modem: ofModem, of("active"), initial: false), at: 0)
            var disconnects = 0
            for cause in [first] + causes {
                for e in t.apply(cause(key), at: 1) {
                    if case let .transition(s, _) = e, s.state == .disconnected { disconnects += 1 }
                }
            }
            XCTAssertEqual(disconnects, 1, "first cause #\(i)")
            XCTAssertEqual(t.liveCalls, [])
            XCTAssertEqual(t.rememberedCount, 0)
        }
    }

    func testObservationsAfterEndAreIgnoredUntilANewCallAppears() {
        var t = makeTracker()
        let key = mmKey(1)
        _ = t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming), initial: false), at: 0)
        _ = t.apply(.callChanged(key, mm(.terminated, .incoming)), at: 1)
        XCTAssertEqual(t.apply(.callChanged(key, mm(.active, .incoming)), at: 2), [])
        XCTAssertEqual(t.apply(.callChanged(key, CallObservation(number: "+1")), at: 2), [])
        XCTAssertEqual(t.apply(.callRemoved(key, reason: .stack("x")), at: 3), [])
        XCTAssertEqual(t.apply(.callChanged(key, mm(.terminated)), at: 4), [], "unknown key, no live phase")
    }

    func testCallChangedForUnknownKeyStartsACallOnlyWithALivePhase() {
        var t = makeTracker()
        XCTAssertEqual(t.apply(.callChanged(ofKey(3), CallObservation(number: "+1")), at: 0), [])
        XCTAssertEqual(t.apply(.callChanged(ofKey(3), of("disconnected")), at: 0), [])
        XCTAssertEqual(t.apply(.callChanged(ofKey(3), CallObservation(reason: "remote")), at: 0), [])
        XCTAssertEqual(t.rememberedCount, 0, "nothing remembered for keys never seen live")
        let ev = t.apply(.callChanged(ofKey(3), of("alerting")), at: 1)
        XCTAssertEqual(describe(ev), ["id-1 new->dialing.alerting", "busy id-1"])
        XCTAssertEqual(snapshots(ev)[0].direction, .outgoing)
        XCTAssertFalse(snapshots(ev)[0].initial)
    }

    func testCallAppearedForALiveKeyIsAnUpdate() {
        var t = makeTracker()
        let key = mmKey(1)
        _ = t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming), initial: false), at: 0)
        var ev = t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming, number: "+5"), initial: true), at: 1)
        XCTAssertEqual(describe(ev), ["id-1 updated"])
        ev = t.apply(.callAppeared(key, modem: mmModem, mm(.active, .incoming), initial: true), at: 2)
        XCTAssertEqual(describe(ev), ["id-1 incoming->connected.active"], "no new id, no second busy")
        XCTAssertEqual(t.liveCalls.count, 1)
        XCTAssertEqual(t.call(key)?.firstSeen, 0)
        // An appearance listing it as terminated ends it, once.
        ev = t.apply(.callAppeared(key, modem: mmModem, mm(.terminated, .incoming), initial: true), at: 3)
        XCTAssertEqual(describe(ev), ["id-1 connected->disconnected(-)", "idle id-1"])
    }

    func testDirectionInferenceAndNeverOverwrittenWithUnknown() {
        var t = makeTracker()
        let cases: [(String, CallDirection)] = [
            ("incoming", .incoming), ("waiting", .incoming),
            ("dialing", .outgoing), ("alerting", .outgoing),
            ("active", .unknown), ("held", .unknown),
        ]
        for (i, (state, expected)) in cases.enumerated() {
            _ = t.apply(.callAppeared(ofKey(i + 1), modem: ofModem, of(state), initial: true), at: 0)
            XCTAssertEqual(t.call(ofKey(i + 1))?.direction, expected, state)
        }
        // ModemManager's Direction wins over inference, even when the state suggests otherwise;
        // MM "unknown" (0) direction falls back to inference.
        _ = t.apply(.callAppeared(mmKey(1), modem: mmModem,
                                  CallObservation(phase: .live(.connected, .active), direction: .outgoing),
                                  initial: true), at: 0)
        XCTAssertEqual(t.call(mmKey(1))?.direction, .outgoing)
        _ = t.apply(.callAppeared(mmKey(2), modem: mmModem, mm(.ringingIn, .unknown), initial: false), at: 0)
        XCTAssertEqual(t.call(mmKey(2))?.direction, .incoming)

        // Unknown never overwrites a known direction.
        XCTAssertEqual(t.apply(.callChanged(mmKey(2), mm(.ringingIn, .unknown)), at: 1), [])
        XCTAssertEqual(t.call(mmKey(2))?.direction, .incoming)
        // A direction learned later for a call seen only as active is an update.
        let ev = t.apply(.callChanged(ofKey(5), CallObservation(direction: .incoming)), at: 1)
        XCTAssertEqual(describe(ev), ["id-5 updated"])
        XCTAssertEqual(t.call(ofKey(5))?.direction, .incoming)
    }

    func testMissedOnlyForUnansweredIncomingCalls() {
        var t = makeTracker()
        // First seen waiting, then the backend claims outgoing: still missed if never answered.
        _ = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("waiting"), initial: false), at: 0)
        _ = t.apply(.callChanged(ofKey(1), CallObservation(direction: .outgoing)), at: 0)
        var ev = t.apply(.callRemoved(ofKey(1), reason: nil), at: 1)
        XCTAssertEqual(describe(ev), ["id-1 incoming->disconnected(removed)", "id-1 missed", "idle id-1"])

        // Seen only active with unknown direction: not missed.
        _ = t.apply(.callAppeared(ofKey(2), modem: ofModem, of("active"), initial: true), at: 2)
        ev = t.apply(.callChanged(ofKey(2), of("disconnected")), at: 3)
        XCTAssertEqual(describe(ev), ["id-2 connected->disconnected(-)", "idle id-2"])

        // Incoming, first seen held (answered before start-up): connected, so not missed.
        _ = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.held, .incoming), initial: true), at: 4)
        ev = t.apply(.backendLost(.modemManager), at: 5)
        XCTAssertEqual(describe(ev), ["id-3 connected->disconnected(backend-lost)", "idle id-3"])

        // Incoming by Direction, though first seen in a dialing-like state: missed.
        _ = t.apply(.callAppeared(mmKey(2), modem: mmModem,
                                  CallObservation(phase: .live(.dialing, .dialing), direction: .incoming),
                                  initial: false), at: 6)
        ev = t.apply(.modemRemoved(.modemManager, modem: mmModem), at: 7)
        XCTAssertEqual(describe(ev), ["id-4 dialing->disconnected(modem-removed)", "id-4 missed", "idle id-4"])
    }

    func testReasonRules() {
        var t = makeTracker()
        // The most recent reason given is kept.
        _ = t.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.ringingIn, .incoming, reason: .incomingNew),
                                  initial: false), at: 0)
        _ = t.apply(.callChanged(mmKey(1), mm(.active, .incoming, reason: .accepted)), at: 1)
        XCTAssertEqual(t.call(mmKey(1))?.reason?.word, "accepted")
        var ev = t.apply(.callChanged(mmKey(1), mm(.terminated, .incoming, rawReason: 123)), at: 2)
        XCTAssertEqual(snapshots(ev)[0].reason?.word, "123", "unknown raw reason kept verbatim")
        // A reason given on removal wins; with none, a previous one stays, else "removed".
        _ = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("active"), initial: false), at: 3)
        ev = t.apply(.callRemoved(ofKey(1), reason: .stack("network")), at: 4)
        XCTAssertEqual(snapshots(ev)[0].reason?.word, "network")
        _ = t.apply(.callAppeared(ofKey(1), modem: ofModem, of("active"), initial: false), at: 5)
        ev = t.apply(.callRemoved(ofKey(1), reason: nil), at: 6)
        XCTAssertEqual(snapshots(ev)[0].reason?.word, "removed")
        // backend-lost / modem-removed replace an earlier reason.
        _ = t.apply(.callAppeared(ofKey(2), modem: ofModem, of("active"), initial: false), at: 7)
        _ = t.apply(.callChanged(ofKey(2), CallObservation(reason: "remote")), at: 7)
        ev = t.apply(.backendLost(.ofono), at: 8)
        XCTAssertEqual(snapshots(ev)[0].reason?.word, "backend-lost")
        XCTAssertTrue(snapshots(ev).allSatisfy { $0.reason == .backendLost })
    }

    func testTimestamps() {
        var t = makeTracker()
        let key = mmKey(1)
        _ = t.apply(.callAppeared(key, modem: mmModem, mm(.dialing, .outgoing), initial: false), at: 1000.25)
        _ = t.apply(.callChanged(key, mm(.ringingOut, .outgoing)), at: 1001)
        XCTAssertNil(t.call(key)?.connectedAt)
        _ = t.apply(.callChanged(key, mm(.active, .outgoing)), at: 1002.5)
        _ = t.apply(.callChanged(key, mm(.held, .outgoing)), at: 1003)
        _ = t.apply(.callChanged(key, mm(.active, .outgoing)), at: 1004)
        let ev = t.apply(.callChanged(key, mm(.terminated, .outgoing)), at: 1010)
        let s = snapshots(ev)[0]
        XCTAssertEqual(s.firstSeen, 1000.25)
        XCTAssertEqual(s.connectedAt, 1002.5)
        XCTAssertEqual(s.endedAt, 1010)
        XCTAssertNil(s.detail)
        XCTAssertEqual(snapshots(ev)[1], s, "idle carries the ended call")
    }

    func testLiveDisconnectedPhaseIsTreatedAsEnded() {
        var t = makeTracker()
        XCTAssertEqual(t.apply(.callAppeared(ofKey(1), modem: ofModem,
                                             CallObservation(phase: .live(.disconnected, .active)),
                                             initial: true), at: 0), [])
        _ = t.apply(.callAppeared(ofKey(2), modem: ofModem, of("incoming"), initial: false), at: 0)
        let ev = t.apply(.callChanged(ofKey(2), CallObservation(phase: .live(.disconnected, .ringing))), at: 1)
        XCTAssertEqual(describe(ev), ["id-1 incoming->disconnected(-)", "id-1 missed", "idle id-1"])
    }

    func testHugeAndOddStringsAreKeptVerbatim() {
        var t = makeTracker()
        let huge = String(repeating: "☎️\u{0}\"\n\\", count: 200_000)
        let path = "/" + String(repeating: "p", count: 100_000)
        let key = CallKey(backend: .ofono, path: path)
        var ev = t.apply(.callAppeared(key, modem: huge, of("incoming", number: huge, name: huge), initial: false),
                         at: -.infinity)
        XCTAssertEqual(snapshots(ev)[0].number, huge)
        XCTAssertEqual(snapshots(ev)[0].name, huge)
        XCTAssertEqual(snapshots(ev)[0].modem.eventValue, huge)
        XCTAssertEqual(snapshots(ev)[0].key.path, path)
        ev = t.apply(.callChanged(key, CallObservation(phase: .unknown(huge), reason: huge)), at: .nan)
        XCTAssertEqual(ev, [])
        ev = t.apply(.modemRemoved(.ofono, modem: huge), at: .greatestFiniteMagnitude)
        XCTAssertEqual(describe(ev).count, 3)
        XCTAssertEqual(snapshots(ev)[0].reason?.word, "modem-removed")
    }

    // MARK: - Memory

    func testTenThousandLifecyclesLeaveNothingTracked() {
        var t = makeTracker()
        var busy = 0, idle = 0, missed = 0, disconnected = 0
        var ids = Set<String>()
        func count(_ events: [TrackerEvent]) {
            for e in events {
                switch e {
                case .busy: busy += 1
                case .idle: idle += 1
                case .missed: missed += 1
                case let .transition(s, _):
                    ids.insert(s.id)
                    if s.state == .disconnected { disconnected += 1 }
                case .updated, .announced, .withdrawn: break
                }
            }
        }
        for i in 0..<10_000 {
            let time = Double(i)
            switch i % 4 {
            case 0: // oFono: answered, then the object is removed; the path is reused.
                let key = ofKey(1)
                count(t.apply(.callAppeared(key, modem: ofModem, of("incoming", number: "+\(i)"), initial: false), at: time))
                count(t.apply(.callChanged(key, of("active")), at: time))
                count(t.apply(.callChanged(key, CallObservation(reason: "remote")), at: time))
                count(t.apply(.callChanged(key, of("disconnected")), at: time))
                count(t.apply(.callRemoved(key, reason: nil), at: time))
            case 1: // ModemManager: missed, deleted by some client.
                let key = mmKey(i % 7)
                count(t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming), initial: false), at: time))
                count(t.apply(.callChanged(key, mm(.terminated, .incoming, reason: .terminated)), at: time))
                count(t.apply(.callRemoved(key, reason: nil), at: time))
            case 2: // ModemManager: outgoing, terminated, never deleted; a new call reuses the path later.
                let key = mmKey(100 + i % 3)
                count(t.apply(.callAppeared(key, modem: mmModem, mm(.dialing, .outgoing), initial: false), at: time))
                count(t.apply(.callChanged(key, mm(.active, .outgoing)), at: time))
                count(t.apply(.callChanged(key, mm(.terminated, .outgoing)), at: time))
            default: // oFono removed straight away.
                let key = ofKey(2)
                count(t.apply(.callAppeared(key, modem: ofModem, of("dialing"), initial: false), at: time))
                count(t.apply(.callRemoved(key, reason: nil), at: time))
            }
        }
        // The three never-deleted MM paths are the only memory left, and deleting them clears it.
        XCTAssertEqual(t.rememberedCount, 3)
        for n in 100..<103 { _ = t.apply(.callRemoved(mmKey(n), reason: nil), at: 10_000) }
        XCTAssertEqual(t.liveCalls, [])
        XCTAssertEqual(t.rememberedCount, 0)
        XCTAssertEqual(ids.count, 10_000)
        XCTAssertEqual(disconnected, 10_000)
        XCTAssertEqual(busy, 10_000)
        XCTAssertEqual(idle, 10_000)
        XCTAssertEqual(missed, 2_500)
    }

    func testEndedButNeverRemovedCallsAreBounded() {
        var t = makeTracker()
        for i in 0..<10_000 {
            let key = mmKey(i)  // every call on a fresh path, never deleted
            _ = t.apply(.callAppeared(key, modem: mmModem, mm(.ringingIn, .incoming), initial: false), at: Double(i))
            _ = t.apply(.callChanged(key, mm(.terminated, .incoming)), at: Double(i))
            _ = t.apply(.callAppeared(mmKey(20_000 + i), modem: mmModem, CallObservation(), initial: false), at: 0)
        }
        XCTAssertEqual(t.liveCalls, [])
        XCTAssertEqual(t.rememberedCount, 2 * CallTracker.defaultEndedMemory)
        // The most recent ones are still remembered.
        XCTAssertEqual(t.apply(.callChanged(mmKey(9_999), mm(.ringingIn, .incoming)), at: 1), [])
        XCTAssertEqual(t.apply(.backendLost(.modemManager), at: 2), [])
        XCTAssertEqual(t.rememberedCount, 0)
    }

    func testSmallEndedMemoryForgetsTheOldestFirst() {
        var t = makeTracker(endedMemory: 2)
        for n in 1...3 {
            _ = t.apply(.callAppeared(mmKey(n), modem: mmModem, mm(.terminated), initial: true), at: 0)
        }
        XCTAssertEqual(t.rememberedCount, 2)
        XCTAssertEqual(t.apply(.callChanged(mmKey(3), mm(.active, .incoming)), at: 1), [])
        XCTAssertEqual(t.apply(.callChanged(mmKey(2), mm(.active, .incoming)), at: 1), [])
        // The oldest was forgotten: a live signal on it is taken as a new call.
        let ev = t.apply(.callChanged(mmKey(1), mm(.active, .incoming)), at: 1)
        XCTAssertEqual(describe(ev), ["id-1 new->connected.active", "busy id-1"])

        var none = makeTracker(endedMemory: -1)
        XCTAssertEqual(none.apply(.callAppeared(mmKey(1), modem: mmModem, mm(.terminated), initial: true), at: 0), [])
        XCTAssertEqual(none.rememberedCount, 0)
    }

    func testDefaultTrackerUsesRandomUUIDs() {
        var t = CallTracker()
        let a = snapshots(t.apply(.callAppeared(ofKey(1), modem: ofModem, of("incoming"), initial: false), at: 0))[0]
        _ = t.apply(.callRemoved(ofKey(1), reason: nil), at: 1)
        let b = snapshots(t.apply(.callAppeared(ofKey(1), modem: ofModem, of("incoming"), initial: false), at: 2))[0]
        XCTAssertTrue(CallID.isWellFormed(a.id), a.id)
        XCTAssertTrue(CallID.isWellFormed(b.id), b.id)
        XCTAssertNotEqual(a.id, b.id)
    }
}

/// The tracker's side of a modem's identity: stamped on its calls, never an event of its own.
final class CallTrackerModemIdentityTests: XCTestCase {
    let modem = "/org/freedesktop/ModemManager1/Modem/0"
    let imei = ModemIdentity(equipmentID: "356938000000000", ownNumber: "+15550100000", operatorName: "Net")

    private func ring(_ path: String) -> BackendEvent {
        .callAppeared(CallKey(backend: .modemManager, path: path), modem: modem,
                      CallObservation(phase: .live(.incoming, .ringing), direction: .incoming), initial: false)
    }

    func testIdentityIsStampedOnCallsAndKeptAfterTheModemGoes() {
        var tracker = CallTracker()
        XCTAssertEqual(tracker.apply(.modemIdentified(.modemManager, modem: modem, imei), at: 1), [])
        // Same path, other stack: not this modem.
        XCTAssertEqual(tracker.apply(.modemIdentified(.ofono, modem: modem, ModemIdentity(equipmentID: "x")), at: 1), [])
        let first = tracker.apply(ring("/c/1"), at: 2)
        XCTAssertEqual(first.first?.call?.modemIdentity, imei)

        var roaming = imei
        roaming.operatorName = "Roam"
        XCTAssertEqual(tracker.apply(.modemIdentified(.modemManager, modem: modem, roaming), at: 3), [])
        XCTAssertEqual(tracker.liveCalls.first?.modemIdentity, roaming)

        let ended = tracker.apply(.modemRemoved(.modemManager, modem: modem), at: 4)
        XCTAssertEqual(ended.compactMap(\.call?.modemIdentity), [roaming, roaming, roaming], "disconnected, missed, idle")
        // Forgotten with the modem: a call on a modem of that path that was not identified again has none.
        XCTAssertEqual(tracker.apply(ring("/c/2"), at: 5).first?.call?.modemIdentity, .unknown)
    }

    func testAModemFirstSeenThroughItsCallGetsItsIdentityWhenTheModemIsNamed() {
        var tracker = CallTracker()
        _ = tracker.apply(.modemIdentified(.modemManager, modem: modem, imei), at: 1)
        let key = CallKey(backend: .modemManager, path: "/c/1")
        _ = tracker.apply(.callChanged(key, CallObservation(phase: .live(.incoming, .ringing))), at: 2)
        XCTAssertEqual(tracker.liveCalls.first?.modemIdentity, .unknown)
        _ = tracker.apply(.callAppeared(key, modem: modem, CallObservation(), initial: false), at: 3)
        XCTAssertEqual(tracker.liveCalls.first?.modemIdentity, imei)
    }

    func testValuesAreClippedAtACharacterBoundary() {
        let identity = ModemIdentity(equipmentID: String(repeating: "9", count: 100),
                                     operatorName: "a" + String(repeating: "€", count: 30))
        XCTAssertEqual(identity.equipmentID.utf8.count, ModemIdentity.maxBytes)
        XCTAssertEqual(identity.operatorName, "a" + String(repeating: "€", count: 21))
    }
}
