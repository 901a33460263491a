import DBus
import Glibc
import TestSupport
import XCTest
@testable import CallMonitor

/// The ModemManager backend against the project's fake ModemManager on a private bus.
final class ModemManagerBackendTests: MonitorTestCase {
    let modem0 = "/org/freedesktop/ModemManager1/Modem/0"
    let callInterface = "org.freedesktop.ModemManager1.Call"
    let voiceInterface = "org.freedesktop.ModemManager1.Modem.Voice"

    private func ring(_ number: String, on modem: String? = nil) throws -> String {
        try mockPath(.modemManager, "Ring", try ObjectPath(modem ?? modem0), number)
    }

    private func setState(_ call: String, _ state: ModemManagerCallState, reason: ModemManagerCallStateReason) throws {
        try setState(call, rawState: state.rawValue, reason: reason)
    }

    private func setState(_ call: String, rawState: Int32, reason: ModemManagerCallStateReason) throws {
        try mock(.modemManager, "SetState", try ObjectPath(call), rawState, UInt32(reason.rawValue))
    }

    /// One call of the fake's start-up parameters; with no direction the fake picks the likely one.
    private func mockCall(_ state: ModemManagerCallState, _ direction: ModemManagerCallDirection? = nil,
                          number: String) -> String {
        let direction = direction.map { #", "direction": \#($0.rawValue)"# } ?? ""
        return #"{"state": \#(state.rawValue)\#(direction), "number": "\#(number)"}"#
    }

    /// `StateChanged(i old, i new, u reason)` from `owner`, as the daemon sends it.
    private func emitStateChanged(_ owner: Connection, _ path: ObjectPath, _ old: ModemManagerCallState,
                                  _ new: ModemManagerCallState, _ reason: ModemManagerCallStateReason) throws {
        try owner.emit(path: path, interface: callInterface, member: "StateChanged", old.rawValue, new.rawValue,
                       UInt32(reason.rawValue))
    }

    private func startAndRing(_ number: String) throws -> String {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        let call = try ring(number)
        expect(["A new -> incoming.ringing incoming '\(number)' reason=incoming-new", "busy A"])
        return call
    }

    func testIncomingAnsweredThenRemoteHangup() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        XCTAssertEqual(notices.count, 2, "\(notices)")
        if case .serviceAppeared(.modemManager, let owner)? = notices.first {
            XCTAssertTrue(owner.hasPrefix(":"), owner)
        } else {
            XCTFail("\(notices)")
        }
        XCTAssertEqual(notices.last, .synced(.modemManager, modems: 1, calls: 0))
        XCTAssertEqual(events.count, 0)

        let call = try ring("+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234' reason=incoming-new", "busy A"])
        let ringing = try XCTUnwrap(self.call("A"))
        XCTAssertTrue(CallID.isWellFormed(ringing.id))
        XCTAssertEqual(ringing.key, CallKey(backend: .modemManager, path: call))
        XCTAssertEqual(ringing.modem.eventValue, modem0)
        XCTAssertFalse(ringing.initial)

        try callMethod(.modemManager, call, callInterface, "Accept")
        expect(["A incoming -> connected.active incoming '+15551234' reason=accepted"])
        XCTAssertEqual(monitor.liveCalls.map(\.id), [ringing.id])

        try mock(.modemManager, "RemoteHangup", try ObjectPath(call))
        expect(["A connected -> disconnected incoming '+15551234' reason=terminated", "idle A"])
        let ended = try XCTUnwrap(self.call("A"))
        XCTAssertNotNil(ended.connectedAt)
        XCTAssertNotNil(ended.endedAt)
        XCTAssertNil(ended.detail)
        XCTAssertEqual(monitor.liveCalls, [])
        // CallAdded, then StateChanged + PropertiesChanged twice; the Calls list changes are not subscribed to.
        XCTAssertEqual(monitor.decodedSignals, 5)

        // A client deleting the terminated call is no news.
        try mock(.modemManager, "Delete", try ObjectPath(call))
        expectNothingMore()
        XCTAssertEqual(monitor.decodedSignals, 6)
        XCTAssertEqual(malformedNotices, [])
    }

    func testIncomingMissed() throws {
        let call = try startAndRing("+15551234")
        try mock(.modemManager, "RemoteHangup", try ObjectPath(call))
        expect(["A incoming -> disconnected incoming '+15551234' reason=terminated", "A missed", "idle A"])
    }

    func testIncomingRejectedWhileRinging() throws {
        let call = try startAndRing("+15551234")
        try callMethod(.modemManager, call, callInterface, "Hangup")
        expect(["A incoming -> disconnected incoming '+15551234' reason=terminated", "A missed", "idle A"])
    }

    func testOutgoingDialingAlertingConnectedThenLocalHangup() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        // As a dialer does it: CreateCall (State UNKNOWN, outgoing), then Start (→ DIALING).
        let call = try callMethod(.modemManager, modem0, voiceInterface, "CreateCall",
                                  ["number": Variant("+15557654")]).decode(ObjectPath.self).rawValue
        expect(["A new -> dialing.dialing outgoing '+15557654' reason=unknown", "busy A"])
        try callMethod(.modemManager, call, callInterface, "Start")
        expectNothingMore()  // DIALING is still "dialing"; the reason changes silently
        try setState(call, .ringingOut, reason: .outgoingStarted)
        expect(["A dialing -> dialing.alerting outgoing '+15557654' reason=outgoing-started"])
        try setState(call, .active, reason: .accepted)
        expect(["A dialing -> connected.active outgoing '+15557654' reason=accepted"])
        try callMethod(.modemManager, call, callInterface, "Hangup")
        expect(["A connected -> disconnected outgoing '+15557654' reason=terminated", "idle A"])
    }

    func testSignalsThatArriveWhileTheCallIsBeingReadAreReplayedInOrder() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        // The mock's Dial puts CallAdded (UNKNOWN) and StateChanged(UNKNOWN → DIALING) on the bus in one go,
        // so the StateChanged always arrives while the new call's GetAll is still out.
        _ = try mockPath(.modemManager, "Dial", try ObjectPath(modem0), "+15557654")
        expect(["A new -> dialing.dialing outgoing '+15557654'", "busy A"])
        XCTAssertEqual(call("A")?.reason, nil, "the reason of the state before the first change is not known")
        XCTAssertEqual(monitor.liveCalls.first?.reason?.word, "outgoing-started", "then the change and the read set it")
    }

    func testOutgoingBusy() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        let call = try mockPath(.modemManager, "Dial", try ObjectPath(modem0), "+15557654")
        expect(["A new -> dialing.dialing outgoing '+15557654'", "busy A"])
        try setState(call, .ringingOut, reason: .outgoingStarted)
        expect(["A dialing -> dialing.alerting outgoing '+15557654' reason=outgoing-started"])
        try setState(call, .terminated, reason: .refusedOrBusy)
        expect(["A dialing -> disconnected outgoing '+15557654' reason=refused-or-busy", "idle A"])
    }

    func testWaitingCallThenHoldAndSwapEachTrackedSeparately() throws {
        let first = try startAndRing("+15551111")
        try callMethod(.modemManager, first, callInterface, "Accept")
        expect(["A incoming -> connected.active incoming '+15551111' reason=accepted"])

        let second = try mockPath(.modemManager, "Wait", try ObjectPath(modem0), "+15552222")
        expect(["B new -> incoming.waiting incoming '+15552222' reason=incoming-new"])

        try callMethod(.modemManager, modem0, voiceInterface, "HoldAndAccept")
        expect(["A connected -> connected.held incoming '+15551111' reason=unknown",
                "B incoming -> connected.active incoming '+15552222' reason=accepted"])

        try callMethod(.modemManager, modem0, voiceInterface, "HoldAndAccept")  // swap
        expect(["B connected -> connected.held incoming '+15552222' reason=unknown",
                "A connected -> connected.active incoming '+15551111' reason=accepted"])

        try mock(.modemManager, "RemoteHangup", try ObjectPath(second))
        expect(["B connected -> disconnected incoming '+15552222' reason=terminated"])
        try callMethod(.modemManager, first, callInterface, "Hangup")
        expect(["A connected -> disconnected incoming '+15551111' reason=terminated", "idle A"])
        XCTAssertEqual(described.filter { $0.hasPrefix("busy") || $0.hasPrefix("idle") }, ["busy A", "idle A"])
        XCTAssertFalse(described.contains { $0.hasSuffix("missed") })
    }

    /// A busy gateway: more calls than the bus lets one connection wait for at once (128 on
    /// dbus-daemon's default system bus). Every call is read at start-up, none is dropped.
    func testSyncOfMoreCallsThanTheBusLetsUsAskAtOnce() throws {
        let calls = (0..<200).map { mockCall(.active, number: "+1555\($0)") }.joined(separator: ",")
        try startMock(.modemManager, #"{"modems": 1, "calls": [\#(calls)]}"#)
        try startMonitor(.modemManager)
        XCTAssertTrue(notices.contains(.synced(.modemManager, modems: 1, calls: 200)), "\(notices)")
        XCTAssertEqual(monitor.liveCalls.count, 200)
        XCTAssertTrue(monitor.liveCalls.allSatisfy(\.initial))
        XCTAssertFalse(notices.contains { if case .callUnreadable = $0 { return true } else { return false } })
    }

    func testCallsLiveAtStartAreInitialAndTerminatedOnesAreHistory() throws {
        try startMock(.modemManager, """
            {"modems": 1, "calls": [\(mockCall(.active, number: "+15551234")), \(mockCall(.terminated, number: "+15550000")),
                                    \(mockCall(.held, .outgoing, number: "+15559999"))]}
            """)
        try startMonitor(.modemManager)
        // ListCalls is newest first, as the daemon's.
        expect(["A new -> connected.held outgoing '+15559999' reason=outgoing-started initial", "busy A",
                "B new -> connected.active incoming '+15551234' reason=accepted initial"])
        XCTAssertTrue(notices.contains(.synced(.modemManager, modems: 1, calls: 3)))
        XCTAssertEqual(call("A")?.modem.eventValue, modem0)

        // A resync finds the same calls: same ids, no events.
        let mark = notices.count
        monitor.resync()
        waitForNotice("the resync", after: mark) { $0 == .synced(.modemManager, modems: 1, calls: 3) }
        expectNothingMore()

        try mock(.modemManager, "RemoteHangup", ObjectPath("/org/freedesktop/ModemManager1/Call/0"))
        expect(["B connected -> disconnected incoming '+15551234' reason=terminated initial"])
    }

    func testDaemonRestartMidCallEndsItThenResyncs() throws {
        let path = try startAndRing("+15551234")
        try callMethod(.modemManager, path, callInterface, "Accept")
        expect(["A incoming -> connected.active incoming '+15551234' reason=accepted"])

        killMock(.modemManager)
        expect(["A connected -> disconnected incoming '+15551234' reason=backend-lost", "idle A"])
        XCTAssertEqual(monitor.liveCalls, [])

        // The call survived in the modem; the new daemon lists it again (its paths count from 0 again).
        let mark = notices.count
        try startMock(.modemManager, #"{"calls": [\#(mockCall(.active, number: "+15551234"))]}"#)
        waitForNotice("the resync", after: mark) { $0 == .synced(.modemManager, modems: 1, calls: 1) }
        expect(["B new -> connected.active incoming '+15551234' reason=accepted initial", "busy B"])
        XCTAssertEqual(call("B")?.key.path, path, "the same path, a new call")
        XCTAssertNotEqual(call("A")?.id, call("B")?.id)
    }

    func testPathUsedAgainAfterARestartIsANewCall() throws {
        let call = try startAndRing("+15551234")
        try mock(.modemManager, "RemoteHangup", try ObjectPath(call))
        expect(["A incoming -> disconnected incoming '+15551234' reason=terminated", "A missed", "idle A"])
        // The terminated call stays listed (nobody deleted it) when the daemon goes away.
        killMock(.modemManager)
        expectNothingMore()

        try startMock(.modemManager)
        waitForNotice("the resync") { $0 == .synced(.modemManager, modems: 1, calls: 0) }
        let again = try ring("+15559999")
        XCTAssertEqual(again, call)
        expect(["B new -> incoming.ringing incoming '+15559999' reason=incoming-new", "busy B"])
    }

    func testLateNumberIsAnUpdate() throws {
        let call = try startAndRing("")
        try mock(.modemManager, "SetNumber", try ObjectPath(call), "+15551234")
        expect(["A updated incoming '+15551234' reason=incoming-new"])
        try callMethod(.modemManager, call, callInterface, "Accept")
        expect(["A incoming -> connected.active incoming '+15551234' reason=accepted"])
    }

    func testSpoofedSignalsHaveNoEffect() throws {
        let call = try startAndRing("+15551234")
        let (ringing, active, ended) = (ModemManagerCallState.ringingIn.rawValue, ModemManagerCallState.active.rawValue,
                                        ModemManagerCallState.terminated.rawValue)
        let hungUp = ModemManagerCallStateReason.terminated.rawValue
        try run(["gdbus", "emit", "--system", "--object-path", call, "--signal",
                 "org.freedesktop.ModemManager1.Call.StateChanged", "\(ringing)", "\(ended)", "uint32 \(hungUp)"])
        try run(["gdbus", "emit", "--system", "--object-path", call,
                 "--signal", "org.freedesktop.DBus.Properties.PropertiesChanged", "'\(callInterface)'",
                 "{'State': <int32 \(ended)>, 'Number': <'+1666'>}", "@as []"])
        try run(["dbus-send", "--system", "--type=signal", modem0, "\(voiceInterface).CallAdded",
                 "objpath:/org/freedesktop/ModemManager1/Call/9"])
        try run(["dbus-send", "--system", "--type=signal", modem0, "\(voiceInterface).CallDeleted", "objpath:\(call)"])
        try run(["dbus-send", "--system", "--type=signal", "/org/freedesktop/ModemManager1",
                 "org.freedesktop.DBus.ObjectManager.InterfacesRemoved", "objpath:\(modem0)",
                 "array:string:\(voiceInterface)"])
        // The real owner's next change: only it shows, on the call as it really is.
        try callMethod(.modemManager, call, callInterface, "Accept")
        expect(["A incoming -> connected.active incoming '+15551234' reason=accepted"])
        XCTAssertEqual(monitor.liveCalls.map(\.number), ["+15551234"])
        XCTAssertEqual(rejectedNotices, [], "the bus drops signals that do not match sender=")

        // A spoof the bus does deliver (another subscription of ours matches it) is caught by the owner check.
        openTheDoorToSpoofs(interface: callInterface)
        try run(["gdbus", "emit", "--system", "--object-path", call,
                 "--signal", "org.freedesktop.ModemManager1.Call.StateChanged", "\(active)", "\(ended)", "uint32 \(hungUp)"])
        waitForNotice("the rejected signal") {
            if case .rejectedSignal(.modemManager, let sender, "StateChanged") = $0 { return sender.hasPrefix(":") }
            return false
        }
        expectNothingMore()
        XCTAssertEqual(rejectedNotices.count, 1)
        XCTAssertEqual(monitor.liveCalls.map(\.state), [.connected])
    }

    func testMalformedAndUnknownValuesFromTheOwnerAreSkippedButAnOverlongNumberIsCut() throws {
        let call = try startAndRing("+15551234")
        let path = try ObjectPath(call)
        // 4 KiB: far over the cap, yet small enough for the mock's log pipe, which nobody reads.
        let huge = String(repeating: "9", count: 4096)
        // dbusmock's own EmitSignal sends from the real owner, with any signature.
        _ = try control.callBlocking(destination: ModemManagerBus.service, path: path, interface: Self.mockInterface,
                                     member: "EmitSignal", callInterface, "StateChanged", "ii",
                                     [Variant(ModemManagerCallState.ringingIn.rawValue),
                                      Variant(ModemManagerCallState.terminated.rawValue)])
        _ = try control.callBlocking(
            destination: ModemManagerBus.service, path: path, interface: Self.mockInterface, member: "EmitSignal",
            "org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as",
            [Variant(callInterface),
             Variant(["Number": Variant(huge), "State": Variant("active")]),
             Variant([String]())])
        try setState(call, rawState: 42, reason: .unknown)
        // The number was read, too long to keep whole: kept cut and marked (docs/modem-stacks.md §1.6).
        let cut = String(repeating: "9", count: 253) + "…"
        expect(["A updated incoming '\(cut)' reason=incoming-new"])
        let problems = malformedNotices.map(\.description)
        XCTAssertTrue(problems.contains { $0.contains("StateChanged") && $0.contains("'ii'") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("the end of a Number of 4096 bytes (its first 253 are kept, marked …)") },
                      "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("State is not an int32") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("unknown call state 42") }, "\(problems)")
        XCTAssertEqual(problems.filter { $0.contains("unknown call state 42") }.count, 1, "said once: \(problems)")

        // The call goes on from its real state.
        try setState(call, .active, reason: .accepted)
        expect(["A incoming -> connected.active incoming '\(cut)' reason=accepted"])
    }

    func testModemsAddedAndRemovedLater() throws {
        try startMock(.modemManager, #"{"modems": 0}"#)
        try startMonitor(.modemManager)
        XCTAssertTrue(notices.contains(.synced(.modemManager, modems: 0, calls: 0)))
        let modem = try mockPath(.modemManager, "AddModem", "hotplug")
        let call = try ring("+15551234", on: modem)
        expect(["A new -> incoming.ringing incoming '+15551234' reason=incoming-new", "busy A"])
        XCTAssertEqual(self.call("A")?.modem.eventValue, modem)
        XCTAssertEqual(self.call("A")?.key.path, call)

        try mock(.modemManager, "RemoveModem", try ObjectPath(modem))
        expect(["A incoming -> disconnected incoming '+15551234' reason=modem-removed", "A missed", "idle A"])
    }

    func testAnOwnerThatCannotBeReadIsFollowedFromItsSignals() throws {
        // Our own connection owns the name: it answers every method with UnknownObject.
        let owner = try Connection(.address(fixture.address), loop: loop)
        defer { owner.close() }
        try owner.requestName(ModemManagerBus.service)
        otherPeers = [owner.uniqueName]
        try startMonitor(.modemManager)
        waitForNotice("the failed sync") {
            if case .syncFailed(.modemManager, let why) = $0 { return why.contains("GetManagedObjects") }
            return false
        }

        // A change for a call it never announced: the call is placed from the change itself.
        let path: ObjectPath = "/org/freedesktop/ModemManager1/Call/5"
        try emitStateChanged(owner, path, .ringingIn, .active, .accepted)
        expect(["A new -> incoming.ringing incoming ''", "busy A",
                "A incoming -> connected.active incoming '' reason=accepted"])
        XCTAssertEqual(call("A")?.modem, .unknown)
        XCTAssertTrue(notices.contains {
            if case .callUnreadable(.modemManager, let why) = $0 { return why.contains("cannot read call \(path)") }
            return false
        }, "\(notices)")

        try emitStateChanged(owner, path, .active, .terminated, .terminated)
        expect(["A connected -> disconnected incoming '' reason=terminated", "idle A"])
    }

    func testLosingTheBusEndsEveryCall() throws {
        _ = try startAndRing("+15551234")
        connection.onDisconnect = { [unowned self] in self.monitor.connectionLost() }
        kill(try XCTUnwrap(fixture.daemonPID), SIGTERM)
        waitFor("the calls to end") { events.count == 5 }
        XCTAssertEqual(described, ["A new -> incoming.ringing incoming '+15551234' reason=incoming-new", "busy A",
                                   "A incoming -> disconnected incoming '+15551234' reason=backend-lost",
                                   "A missed", "idle A"])
        XCTAssertFalse(monitor.isRunning)
        XCTAssertEqual(monitor.liveCalls, [])
    }

    func testServiceAbsentAtStartIsWaitedFor() throws {
        try startMonitor(.modemManager)
        waitForNotice("absent") { $0 == .serviceAbsent(.modemManager) }
        try startMock(.modemManager, #"{"calls": [\#(mockCall(.ringingIn, number: "+15551234"))]}"#)
        waitForNotice("the sync") { $0 == .synced(.modemManager, modems: 1, calls: 1) }
        expect(["A new -> incoming.ringing incoming '+15551234' reason=incoming-new initial", "busy A"])
    }
}

/// The replay of signals that arrive while a call's properties are being read (no bus).
final class ModemManagerReplayTests: XCTestCase {
    let key = CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/0")
    let modem = "/org/freedesktop/ModemManager1/Modem/0"

    private func run(fetched: ModemManagerCallProperties?, queued: [ModemManagerCallUpdate]) -> [TrackerEvent] {
        var tracker = CallTracker(makeID: { "id" })
        let replay = ModemManagerCallReplay.replay(key: key, modem: modem, initial: false, fetched: fetched,
                                                   queued: queued)
        return replay.events.flatMap { tracker.apply($0, at: 1) }
    }

    private func changed(_ old: ModemManagerCallState, _ new: ModemManagerCallState,
                         _ reason: ModemManagerCallStateReason) -> ModemManagerCallUpdate {
        .stateChanged(old: ModemManagerValue(old), new: ModemManagerValue(new), reason: UInt32(reason.rawValue))
    }

    private func states(_ events: [TrackerEvent]) -> [String] {
        events.compactMap {
            switch $0 {
            case let .transition(call, _): return call.detail.map { "\(call.state.rawValue).\($0.rawValue)" }
                ?? "\(call.state.rawValue)(\(call.reason?.word ?? "-"))"
            case .missed: return "missed"
            default: return nil
            }
        }
    }

    func testACallThatRangAndEndedBeforeItsReadIsStillAMissedCall() {
        let fetched = ModemManagerCallProperties(state: .terminated, reason: .terminated, direction: .incoming,
                                                 number: "+1555")
        let events = run(fetched: fetched, queued: [
            changed(.ringingIn, .terminated, .terminated),
            .properties(ModemManagerCallProperties(state: .terminated, reason: .terminated)),
        ])
        XCTAssertEqual(states(events), ["incoming.ringing", "disconnected(terminated)", "missed"])
    }

    func testAnOlderChangeIsNotReplayedOverTheNewerRead() {
        // PropertiesChanged said ACTIVE, the read (newer) says HELD: the call ends held.
        let fetched = ModemManagerCallProperties(state: .held, reason: .unknown, direction: .incoming, number: "+1555")
        let events = run(fetched: fetched, queued: [.properties(ModemManagerCallProperties(state: .active))])
        XCTAssertEqual(states(events), ["connected.active", "connected.held"])
    }

    func testWithoutQueuedChangesTheReadIsTheFirstSight() {
        let fetched = ModemManagerCallProperties(state: .waiting, reason: .incomingNew, direction: .outgoing,
                                                 number: "+1555")
        let events = run(fetched: fetched, queued: [])
        XCTAssertEqual(states(events), ["dialing.alerting"], "WAITING of an outgoing call is alerting")
    }

    func testAFailedReadStillPlacesTheCallFromItsChanges() {
        let events = run(fetched: nil, queued: [changed(.ringingIn, .active, .accepted)])
        XCTAssertEqual(states(events), ["incoming.ringing", "connected.active"])
        XCTAssertEqual(run(fetched: nil, queued: []), [])
    }
}

/// The notice rate limit (no bus).
final class NoticeLimiterTests: XCTestCase {
    func testFivePerSenderPerWindowThenOneSummaryCountedOnArrival() {
        var limiter = NoticeLimiter(limit: 5, window: 10, maxSources: 2)
        let spoof = BackendNotice.rejectedSignal(.ofono, sender: ":1.9", member: "PropertyChanged")
        var shown: [BackendNotice] = []
        for second in 0..<8 { shown += limiter.admit(spoof, at: Double(second)) }
        XCTAssertEqual(shown, Array(repeating: spoof, count: 5))
        // Another sender has its own window.
        let other = BackendNotice.rejectedSignal(.ofono, sender: ":1.10", member: "CallAdded")
        XCTAssertEqual(limiter.admit(other, at: 8), [other])
        // After the window the next arrival brings the summary first.
        XCTAssertEqual(limiter.admit(spoof, at: 10.5),
                       [.rejectedSuppressed(.ofono, sender: ":1.9", count: 3), spoof])
        // Other notices pass untouched.
        XCTAssertEqual(limiter.admit(.serviceVanished(.ofono), at: 11), [.serviceVanished(.ofono)])
    }

    func testManySendersShareOneWindowAndFlushReportsWhatWasHeld() {
        var limiter = NoticeLimiter(limit: 1, window: 10, maxSources: 2)
        var shown: [BackendNotice] = []
        for n in 0..<6 {
            shown += limiter.admit(.rejectedSignal(.modemManager, sender: ":1.\(n)", member: "StateChanged"), at: 0)
        }
        XCTAssertEqual(shown.count, 3, "two senders of their own, then one shared window: \(shown)")
        XCTAssertEqual(limiter.admit(.malformed(.modemManager, "bad"), at: 0), [.malformed(.modemManager, "bad")],
                       "malformed messages keep their own window")
        XCTAssertEqual(limiter.flush(), [.rejectedSuppressed(.modemManager, sender: NoticeLimiter.otherSenders, count: 3)])
        XCTAssertEqual(limiter.flush(), [])
    }

    func testMalformedNoticesAreLimitedPerBackend() {
        var limiter = NoticeLimiter(limit: 2, window: 10)
        var shown: [BackendNotice] = []
        for n in 0..<4 { shown += limiter.admit(.malformed(.ofono, "bad \(n)"), at: 0) }
        XCTAssertEqual(shown, [.malformed(.ofono, "bad 0"), .malformed(.ofono, "bad 1")])
        XCTAssertEqual(limiter.admit(.malformed(.ofono, "bad 4"), at: 20),
                       [.malformedSuppressed(.ofono, count: 2), .malformed(.ofono, "bad 4")])
    }
}
