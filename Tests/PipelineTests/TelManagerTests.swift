import BGRunManager
import CallMonitor
import DBus
import Glibc
import Loop
import Pipeline
import Processes
import TestSupport
import XCTest

private func ringing(_ number: String, name: String? = nil) -> CallObservation {
    CallObservation(phase: .live(.incoming, .ringing), direction: .incoming, number: number, name: name)
}

private func dialing(_ number: String) -> CallObservation {
    CallObservation(phase: .live(.dialing, .dialing), direction: .outgoing, number: number)
}

private let answered = CallObservation(phase: .live(.connected, .active), reason: "accepted")

private func hungUp(_ reason: String) -> CallObservation { CallObservation(phase: .ended, reason: reason) }

/// The run and hook sinks of the pipeline, fed by a real CallTracker from backend events, linked
/// to a real BGRunManager that takes its lock from dbusmock's logind on a private bus.
final class TelManagerTests: XCTestCase {
    private var harness: LogindHarness!
    private var tracker = CallTracker()
    private var runs: BGRunManager?
    private var hooks: HookRunner?
    private var link: TelManager?
    private var pipeline: EventPipeline?
    /// What the call hooks ask (held here: the sink's reference is weak).
    private var session: SinkSession?
    private var runEvents: [RunEvent] = []
    private var outcomes: [HookOutcome] = []
    /// Monotonic arrival of each outcome.
    private var outcomeArrivals: [Double] = []

    override func setUpWithError() throws {
        harness = try LogindHarness()
        tracker = CallTracker()
    }

    override func tearDown() {
        // XCTest keeps every test case until the process ends: what a test made goes with it here,
        // or AddressSanitizer's exit check finds its loop still alive.
        session = nil
        link = nil
        pipeline = nil
        runs = nil
        hooks = nil
        harness?.stop()
        harness = nil
        runEvents = []
        outcomes = []
        outcomeArrivals = []
    }

    private var directory: String { harness.directory }

    @discardableResult
    private func makeLink(hookDirectory: String? = nil, commands: [String: [[String]]] = [:], hookTimeout: Double = 10,
                          killGrace: Double = 1, hookEnvironment: [String]? = nil) throws -> TelManager {
        if hookDirectory != nil || !commands.isEmpty {
            let runner = HookRunner(loop: harness.loop, settings: HookSettings(
                directory: hookDirectory, commands: commands, timeout: hookTimeout, killGrace: killGrace,
                stdout: .null, stderr: .inherit, baseEnvironment: hookEnvironment ?? Subprocess.currentEnvironment())
            ) { [unowned self] outcome in
                self.outcomes.append(outcome)
                self.outcomeArrivals.append(monotonicNow())
            }
            hooks = runner
        }
        let manager = try BGRunManager(loop: harness.loop, lockBus: harness.connection,
                                       configuration: RunConfiguration(stateDirectory: directory + "/state"),
                                       hooks: hooks) { [unowned self] event in self.runEvents.append(event) }
        runs = manager
        let made = TelManager(runs: manager)
        let assembled = EventPipeline(liveCalls: { [unowned self] in self.tracker.liveCount })
        assembled.append(made)
        if let hooks {
            let asked = StubSession(runID: { made.runID(heldBy: $0) })
            session = asked
            assembled.append(CallHookSink(hooks: hooks, session: asked))
        }
        pipeline = assembled
        link = made
        return made
    }

    /// One backend event through the real tracker into the pipeline; returns how long handling took.
    @discardableResult
    private func feed(_ event: BackendEvent, at time: Double = wallClockNow()) -> Double {
        let began = monotonicNow()
        pipeline?.send(.calls(tracker.apply(event, at: time), time: time))
        return monotonicNow() - began
    }

    private func callID(_ key: CallKey) throws -> String { try XCTUnwrap(tracker.call(key)?.id) }

    private func waitFor(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                         _ condition: @escaping () -> Bool) {
        XCTAssertTrue(harness.run(until: condition, timeout: timeout), "timed out waiting for \(what)", file: file, line: line)
    }

    private func waitForLock(file: StaticString = #filePath, line: UInt = #line) {
        waitFor("the lock", file: file, line: line) {
            self.runEvents.contains { if case .lockTaken = $0.kind { return true }; return false }
        }
    }

    private func stopReasons() -> [String] {
        runEvents.compactMap { if case .stopped(_, let reason, _) = $0.kind { return reason.rawValue }; return nil }
    }

    /// The run a ring starts starts at the ring's time (its `run-started` line and the run's
    /// `started_at` say the ring's moment, not a later read of the clock), and ends at the time
    /// of the call's end.
    func testARunStartsAndEndsAtItsCallsOwnTimes() throws {
        try makeLink()
        let rang = 1_780_000_000.25
        feed(.callAppeared(mmKey(0), modem: mmModem, ringing("+15550001"), initial: false), at: rang)
        XCTAssertEqual(runEvents.first { $0.name == "run-started" }?.time, rang)
        XCTAssertEqual(runs?.run?.startedAt, rang)
        feed(.callChanged(mmKey(0), hungUp("terminated")), at: rang + 5)
        XCTAssertEqual(runEvents.first { $0.name == "run-stopped" }?.time, rang + 5)
    }

    func testLockIsHeldFromTheFirstRingUntilTheLastOfTwoOverlappingCallsEnds() throws {
        let link = try makeLink()
        let runs = try XCTUnwrap(runs)
        feed(.callAppeared(mmKey(0), modem: mmModem, ringing("+15550001"), initial: false))
        let first = try callID(mmKey(0))
        waitForLock()
        XCTAssertEqual(try harness.inhibitors().map(\.what), ["sleep"], "held on the first ring")
        XCTAssertEqual(runs.holders, [first])
        XCTAssertEqual(runs.run?.reason, "incoming")

        feed(.callAppeared(mmKey(1), modem: mmModem, dialing("+15550002"), initial: false))
        let second = try callID(mmKey(1))
        feed(.callChanged(mmKey(0), answered))
        XCTAssertEqual(runs.holders, [first, second])
        XCTAssertEqual(link.liveCallIDs, [first, second])

        feed(.callChanged(mmKey(0), hungUp("terminated")))
        XCTAssertEqual(runs.holders, [second])
        XCTAssertTrue(runs.isRunning, "the second call still holds the run")
        XCTAssertEqual(try harness.inhibitors().count, 1)

        feed(.callChanged(mmKey(1), answered))
        feed(.callRemoved(mmKey(1), reason: nil))
        XCTAssertFalse(runs.isRunning)
        XCTAssertEqual(link.liveCallIDs, [])
        XCTAssertNotNil(harness.waitForInhibitors { $0.isEmpty }, "released when the last call ended")
        XCTAssertEqual(runEvents.filter { $0.name == "run-started" }.count, 1, "one run for both calls")
        XCTAssertEqual(runEvents.filter { $0.name == "lock-taken" }.count, 1, "the lock was never dropped between")
        XCTAssertEqual(stopReasons(), ["idle"])
    }

    func testCallHooksGetTheCallAsTheirEnvironment() throws {
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        for event in ["incoming", "dialing", "connected", "disconnected", "missed", "updated"] {
            try Files.script(hookDirectory + "/" + event,
                             "env -0 > '\(directory)/'\"$TELWATCH_EVENT.$TELWATCH_CALL_ID.env\"")
        }
        try makeLink(hookDirectory: hookDirectory)
        let before = wallClockNow()
        feed(.callAppeared(mmKey(0), modem: mmModem, ringing(""), initial: false))
        let answeredID = try callID(mmKey(0))
        let runID = try XCTUnwrap(runs?.run?.id)
        feed(.callChanged(mmKey(0), CallObservation(number: "+15550100", name: "Alice")))
        feed(.callChanged(mmKey(0), answered))
        feed(.callChanged(mmKey(0), hungUp("terminated")))
        feed(.callAppeared(mmKey(1), modem: mmModem, ringing("+15550199"), initial: false))
        let missedID = try callID(mmKey(1))
        feed(.callChanged(mmKey(1), hungUp("refused-or-busy")))
        waitFor("seven hooks") { self.outcomes.count >= 7 }
        XCTAssertEqual(outcomes.filter { !$0.result.isSuccess }.count, 0, "\(outcomes.map(\.result))")
        XCTAssertEqual(outcomes.filter { $0.key.name == answeredID }.map(\.event),
                       ["incoming", "updated", "connected", "disconnected"], "one call's hooks run in order")

        func environment(_ event: String, _ id: String) throws -> [String: String] {
            try XCTUnwrap(Files.environmentDump("\(directory)/\(event).\(id).env"), "no \(event) hook for \(id)")
        }
        let incoming = try environment("incoming", answeredID)
        let expected: [String: String] = [
            "TELWATCH_EVENT": "incoming", "TELWATCH_CALL_ID": answeredID, "TELWATCH_STATE": "incoming",
            "TELWATCH_PREVIOUS_STATE": "", "TELWATCH_DETAIL": "ringing", "TELWATCH_DIRECTION": "incoming",
            "TELWATCH_NUMBER": "", "TELWATCH_NAME": "", "TELWATCH_REASON": "", "TELWATCH_BACKEND": "modemmanager",
            "TELWATCH_MODEM": mmModem, "TELWATCH_PATH": mmKey(0).path, "TELWATCH_INITIAL": "false",
            "TELWATCH_MISSED": "false", "TELWATCH_MULTIPARTY": "false", "TELWATCH_LIVE_CALLS": "1",
            "TELWATCH_RUN_ID": runID, "TELWATCH_CONTACT": "", "TELWATCH_CONNECTED_AT": "", "TELWATCH_DURATION": "",
            "TELWATCH_RESUMED": "false",
        ]
        for (name, value) in expected { XCTAssertEqual(incoming[name], value, name) }
        let time = try XCTUnwrap(incoming["TELWATCH_TIME"].flatMap(Double.init))
        XCTAssertEqual(time, before, accuracy: 5)

        let updated = try environment("updated", answeredID)
        XCTAssertEqual(updated["TELWATCH_NUMBER"], "+15550100")
        XCTAssertEqual(updated["TELWATCH_NAME"], "Alice")
        XCTAssertEqual(updated["TELWATCH_PREVIOUS_STATE"], "incoming")
        let connected = try environment("connected", answeredID)
        XCTAssertEqual(connected["TELWATCH_PREVIOUS_STATE"], "incoming")
        XCTAssertEqual(connected["TELWATCH_DETAIL"], "active")
        XCTAssertEqual(connected["TELWATCH_REASON"], "accepted")
        let disconnected = try environment("disconnected", answeredID)
        XCTAssertEqual(disconnected["TELWATCH_STATE"], "disconnected")
        XCTAssertEqual(disconnected["TELWATCH_PREVIOUS_STATE"], "connected")
        XCTAssertEqual(disconnected["TELWATCH_DETAIL"], "")
        XCTAssertEqual(disconnected["TELWATCH_REASON"], "terminated")
        XCTAssertEqual(disconnected["TELWATCH_MISSED"], "false")
        XCTAssertEqual(disconnected["TELWATCH_LIVE_CALLS"], "0")
        XCTAssertEqual(disconnected["TELWATCH_RUN_ID"], runID, "the run the call held, though its end ended it")
        let connectedAt = try XCTUnwrap(connected["TELWATCH_CONNECTED_AT"].flatMap(Double.init))
        XCTAssertEqual(connectedAt, before, accuracy: 5)
        XCTAssertEqual(disconnected["TELWATCH_CONNECTED_AT"], connected["TELWATCH_CONNECTED_AT"])
        let talked = try XCTUnwrap(disconnected["TELWATCH_DURATION"].flatMap(Double.init))
        XCTAssertTrue((0..<5).contains(talked), "seconds from the answer to the end: \(talked)")

        let unanswered = try environment("disconnected", missedID)
        XCTAssertEqual(unanswered["TELWATCH_MISSED"], "true")
        let missed = try environment("missed", missedID)
        XCTAssertEqual(missed["TELWATCH_EVENT"], "missed")
        XCTAssertEqual(missed["TELWATCH_PREVIOUS_STATE"], "incoming")
        XCTAssertEqual(missed["TELWATCH_NUMBER"], "+15550199")
        XCTAssertEqual(missed["TELWATCH_REASON"], "refused-or-busy")
        XCTAssertEqual(missed["TELWATCH_CONNECTED_AT"], "", "never answered")
        XCTAssertNotNil(missed["TELWATCH_DURATION"].flatMap(Double.init), "how long it rang")
        XCTAssertEqual(stopReasons(), ["idle", "idle"], "one run per call, one after the other")
    }

    func testAHostileNumberReachesTheHookByteForByteAndNothingRuns() throws {
        let sandboxHome = directory + "/home"
        try Files.makeDirectory(sandboxHome)
        try Files.write(sandboxHome + "/keep", "still here")
        let marker = directory + "/INJECTED"
        // Were any of this evaluated by a shell, `~` is a throwaway HOME and the marker would appear.
        let number = "'; rm -rf ~ #$(id)`touch \(marker)`\n$(touch \(marker)); touch \(marker)\u{1b}[31m\""
        let name = "\"; touch \(marker); echo \u{1b}]0;title\u{07}"
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/incoming", """
            printf '%s' "$TELWATCH_NUMBER" > '\(directory)/number'
            printf '%s' "$TELWATCH_NAME" > '\(directory)/name'
            """)
        let environment = Subprocess.currentEnvironment().filter { !$0.hasPrefix("HOME=") } + ["HOME=" + sandboxHome]
        try makeLink(hookDirectory: hookDirectory, commands: [
            "incoming": [["/usr/bin/env", "-0"], ["/bin/sh", "-c", "env -0 > '\(directory)/configured.env'", "hook"]],
        ], hookEnvironment: environment)

        feed(.callAppeared(mmKey(0), modem: mmModem, ringing(number, name: name), initial: false))
        waitFor("the hooks") { self.outcomes.count >= 3 }
        XCTAssertEqual(outcomes.map(\.result), [.exited(0), .exited(0), .exited(0)])
        XCTAssertEqual(Files.bytes(directory + "/number"), Array(number.utf8))
        XCTAssertEqual(Files.bytes(directory + "/name"), Array(name.utf8))
        XCTAssertEqual(Files.environmentDump(directory + "/configured.env")?["TELWATCH_NUMBER"], number)
        XCTAssertFalse(Files.exists(marker), "something was executed")
        XCTAssertEqual(Files.text(sandboxHome + "/keep"), "still here")
    }

    func testAHangingHookIsKilledAtItsTimeoutWhileLaterEventsArriveOnTime() throws {
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/incoming", """
            case "$TELWATCH_NUMBER" in *hang*) exec sleep 1000;; esac
            exit 0
            """)
        try Files.script(hookDirectory + "/connected", "exit 0")
        // Long enough that "before the timeout" holds on any machine, however loaded: what is
        // checked is the order of things, not how fast they are.
        let timeout = 3.0
        try makeLink(hookDirectory: hookDirectory, hookTimeout: timeout, killGrace: 0.5)
        let hungHookDone = { self.outcomes.contains { $0.key.name == self.tracker.call(mmKey(0))?.id } }

        XCTAssertLessThan(feed(.callAppeared(mmKey(0), modem: mmModem, ringing("+1hang"), initial: false)), timeout / 2)
        let hanging = try callID(mmKey(0))
        XCTAssertLessThan(feed(.callAppeared(mmKey(1), modem: mmModem, ringing("+15550002"), initial: false)), timeout / 2)
        let other = try callID(mmKey(1))
        XCTAssertLessThan(feed(.callChanged(mmKey(0), answered)), timeout / 2, "handing a hook over never waits for it")
        waitForLock()
        XCTAssertFalse(hungHookDone(), "the run started while the hook hung")

        waitFor("the other call's hook") { self.outcomes.contains { $0.key.name == other } }
        XCTAssertFalse(hungHookDone(), "another call's hook ran while one hung")

        waitFor("the hung hook and the one queued behind it", timeout: timeout + 10) {
            self.outcomes.filter { $0.key.name == hanging }.count >= 2
        }
        let ofHanging = outcomes.enumerated().filter { $0.element.key.name == hanging }
        XCTAssertEqual(ofHanging.map(\.element.event), ["incoming", "connected"])
        let hung = ofHanging[0].element
        XCTAssertEqual(hung.result, .timedOut(.signaled(SIGTERM)))
        XCTAssertGreaterThanOrEqual(hung.duration, timeout - 0.01)
        XCTAssertLessThan(hung.duration, 100, "killed at its timeout, not left to run its 1,000 s")
        XCTAssertFalse(ProcessTable.isAlive(try XCTUnwrap(hung.pid)))
        XCTAssertEqual(ofHanging[1].element.result, .exited(0))
        XCTAssertGreaterThanOrEqual(outcomeArrivals[ofHanging[1].offset], outcomeArrivals[ofHanging[0].offset])
    }

    func testShutdownMidCallEndsTheRunAndRunsNoMoreCallHooks() throws {
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        for event in ["incoming", "disconnected", "run-stopped"] {
            try Files.script(hookDirectory + "/" + event, "exit 0")
        }
        try makeLink(hookDirectory: hookDirectory)
        feed(.callAppeared(mmKey(0), modem: mmModem, ringing("+15550001"), initial: false))
        waitForLock()
        var done = false
        pipeline?.finish { done = true }
        waitFor("shutdown") { done }
        XCTAssertEqual(stopReasons(), ["shutdown"])
        XCTAssertNotNil(harness.waitForInhibitors { $0.isEmpty })
        feed(.callChanged(mmKey(0), hungUp("terminated")))
        XCTAssertTrue(hooks?.isIdle ?? false)
        XCTAssertEqual(outcomes.map(\.event).sorted(), ["incoming", "run-stopped"], "no hook after shutdown began")
        XCTAssertFalse(runs?.isRunning ?? true)
    }

    func testCallsLearnedOnResumeTellTheirHooksAndAnEndedOneHoldsNoRun() throws {
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        for event in ["incoming", "disconnected", "missed"] {
            try Files.script(hookDirectory + "/" + event,
                             "env -0 > '\(directory)/'\"$TELWATCH_EVENT.$TELWATCH_CALL_ID.env\"")
        }
        let link = try makeLink(hookDirectory: hookDirectory)
        let runs = try XCTUnwrap(runs)
        // A terminated call found by the resync, never seen: it came and went while asleep.
        feed(.learnedOnResume(.callAppeared(mmKey(0), modem: mmModem, CallObservation(
            phase: .ended, direction: .incoming, number: "+15550300", reason: "terminated"), initial: false)))
        XCTAssertFalse(runs.isRunning, "a call that is over starts no run")
        XCTAssertEqual(link.liveCallIDs, [])
        // A call found ringing by the same resync does hold the run.
        feed(.learnedOnResume(.callAppeared(mmKey(1), modem: mmModem, ringing("+15550301"), initial: false)))
        let ringingID = try callID(mmKey(1))
        XCTAssertTrue(runs.isRunning)
        // Its later change, as it happens, is not flagged.
        feed(.callChanged(mmKey(1), hungUp("terminated")))
        waitFor("five hooks") { self.outcomes.count >= 5 }
        XCTAssertEqual(outcomes.filter { !$0.result.isSuccess }.count, 0, "\(outcomes.map(\.result))")

        let missedID = try XCTUnwrap(outcomes.first { $0.event == "missed" && $0.key.name != ringingID }?.key.name)
        let ended = try XCTUnwrap(Files.environmentDump("\(directory)/disconnected.\(missedID).env"))
        XCTAssertEqual(ended["TELWATCH_RESUMED"], "true")
        XCTAssertEqual(ended["TELWATCH_MISSED"], "true")
        XCTAssertEqual(ended["TELWATCH_PREVIOUS_STATE"], "incoming")
        XCTAssertEqual(ended["TELWATCH_RUN_ID"], "")
        XCTAssertEqual(try XCTUnwrap(Files.environmentDump("\(directory)/missed.\(missedID).env"))["TELWATCH_RESUMED"],
                       "true")
        let found = try XCTUnwrap(Files.environmentDump("\(directory)/incoming.\(ringingID).env"))
        XCTAssertEqual(found["TELWATCH_RESUMED"], "true")
        XCTAssertEqual(found["TELWATCH_INITIAL"], "false")
        let later = try XCTUnwrap(Files.environmentDump("\(directory)/disconnected.\(ringingID).env"))
        XCTAssertEqual(later["TELWATCH_RESUMED"], "false")
        XCTAssertEqual(stopReasons(), ["idle"])
    }
}
