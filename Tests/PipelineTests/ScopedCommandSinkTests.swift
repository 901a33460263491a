import BGRunManager
import CallMonitor
import Contacts
import Glibc
import Loop
import Pipeline
import TestSupport
import XCTest

/// Call-scoped commands (`while.SCOPE`) fed by a real CallTracker: real children, started and
/// stopped through a real loop. Each command says on its stdout (a pipe the loop watches) when it
/// starts, with what it was told, and when its SIGTERM reaches it.
final class ScopedCommandSinkTests: XCTestCase {
    private var loop: EventLoop!
    private var scratch: ScratchDirectory!
    private var output: LoopPipe!
    private var tracker = CallTracker()
    private var sink: ScopedCommandSink!
    private var pipeline: EventPipeline!
    private var reports: [String] = []
    /// Lines of `output` already waited for.
    private var taken = Set<Int>()

    override func setUpWithError() throws {
        loop = try EventLoop()
        scratch = try ScratchDirectory()
        output = try LoopPipe(loop: loop)
        tracker = CallTracker()
        reports = []
        taken = []
    }

    /// Output lines not yet waited for.
    private var untaken: [String] { output.lines.indices.filter { !taken.contains($0) }.map { output.lines[$0] } }

    override func tearDown() {
        // Dropping the sink's children kills and reaps them (ProcessGroupChild's deinit).
        pipeline = nil
        sink = nil
        output = nil
        scratch?.remove()
        loop = nil
    }

    /// A command that says `start SCOPE EVENT NUMBER PID` and, on SIGTERM, `stop SCOPE PID`.
    private func reporter() throws -> String {
        let path = scratch.path + "/reporter"
        try Files.script(path, """
        trap 'echo "stop $TELWATCH_SCOPE $$"; exit 0' TERM
        echo "start $TELWATCH_SCOPE $TELWATCH_EVENT $TELWATCH_NUMBER $$"
        while :; do sleep 60 & wait $!; done
        """)
        return path
    }

    private func makeSink(_ commands: [(CallScope, [String])], grace: Double = 2,
                          contacts: ContactDirectory? = nil, session: SinkSession? = nil) {
        let made = ScopedCommandSink(
            loop: loop,
            settings: ScopedCommandSettings(commands: commands.map { ScopedCommand(scope: $0.0, arguments: $0.1) },
                                            grace: grace, stdout: .fd(output.writeFD), stderr: .inherit),
            contacts: contacts, session: session, report: { [unowned self] in self.reports.append($0) })
        // The contacts are looked up once per event, at the pipeline's entrance.
        let assembled = EventPipeline(liveCalls: { [unowned self] in self.tracker.liveCount }, contacts: contacts)
        assembled.append(made)
        sink = made
        pipeline = assembled
    }

    private func feed(_ event: BackendEvent) {
        let time = wallClockNow()
        pipeline.send(.calls(tracker.apply(event, at: time), time: time))
    }

    private func ring(_ n: Int, _ number: String, detail: CallDetail = .ringing) {
        feed(.callAppeared(mmKey(n), modem: mmModem, CallObservation(phase: .live(.incoming, detail), direction: .incoming,
                                                                     number: number), initial: false))
    }

    private func set(_ n: Int, _ state: CallState, _ detail: CallDetail) {
        feed(.callChanged(mmKey(n), CallObservation(phase: .live(state, detail))))
    }

    private func hangUp(_ n: Int) { feed(.callChanged(mmKey(n), CallObservation(phase: .ended, reason: "terminated"))) }

    /// Waits for the next line of the commands' output that starts with `prefix`.
    private func line(_ prefix: String, file: StaticString = #filePath, line number: UInt = #line) -> [String] {
        var found: String?
        let ok = loop.run(until: {
            let lines = self.output.lines
            if let index = lines.indices.first(where: { !self.taken.contains($0) && lines[$0].hasPrefix(prefix) }) {
                self.taken.insert(index)
                found = lines[index]
                return true
            }
            return false
        }, timeout: 10)
        XCTAssertTrue(ok, "no line \(prefix)…; have \(output.lines), reports \(reports)", file: file, line: number)
        return found?.split(separator: " ").map(String.init) ?? []
    }

    private func waitUntilReaped(_ pid: pid_t, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(ProcessTable.runLoop(loop, untilEndOf: pid, timeout: 10), "pid \(pid) still there", file: file, line: line)
        XCTAssertTrue(loop.run(until: { kill(pid, 0) != 0 }, timeout: 5), "pid \(pid) was never reaped", file: file, line: line)
    }

    func testARingCommandLivesFromTheRingToTheAnswerAndTheCallCommandFromTheAnswerToTheEnd() throws {
        let command = try reporter()
        makeSink([(.ringing, [command]), (.active, [command])])
        ring(0, "+15550001")
        let started = line("start ringing")
        XCTAssertEqual(Array(started.dropFirst(2).prefix(2)), ["incoming", "+15550001"], "the call event's environment")
        let ringPID = try XCTUnwrap(pid_t(started.last ?? ""))
        XCTAssertEqual(sink.runningCount, 1)

        set(0, .connected, .active)
        XCTAssertEqual(line("stop ringing"), ["stop", "ringing", String(ringPID)], "answered: the ring got its SIGTERM")
        let call = line("start active")
        XCTAssertEqual(call[2], "connected")
        waitUntilReaped(ringPID)
        XCTAssertEqual(sink.runningCount, 1, "only the call's command is left")

        hangUp(0)
        let callPID = try XCTUnwrap(pid_t(call.last ?? ""))
        XCTAssertEqual(line("stop active"), ["stop", "active", String(callPID)])
        waitUntilReaped(callPID)
        XCTAssertEqual(sink.runningCount, 0)
        XCTAssertEqual(reports, [])
    }

    func testAScopeLastsWhileAnyOfItsCallsIsInItAndTheCommandStartsOnce() throws {
        let command = try reporter()
        makeSink([(.live, [command]), (.ringing, [command]), (.held, [command])])
        ring(0, "+15550001")
        let live = line("start live")
        XCTAssertEqual(live[3], "+15550001")
        _ = line("start ringing")
        set(0, .connected, .active)
        _ = line("stop ringing")
        ring(1, "+15550002", detail: .waiting)
        set(0, .connected, .held)
        let held = line("start held")
        XCTAssertEqual(held[3], "+15550001", "the held call's event")
        set(1, .connected, .active)
        // Swap: the first call back, the second on hold, in two signals: held stays occupied.
        set(1, .connected, .held)
        set(0, .connected, .active)
        hangUp(1)
        _ = line("stop held")
        XCTAssertFalse(untaken.contains { $0.hasPrefix("stop live") }, "one call is still live")
        hangUp(0)
        _ = line("stop live")
        XCTAssertEqual(untaken.filter { $0.hasPrefix("start") }, [], "nothing started twice: \(output.lines)")
    }

    func testACommandThatIgnoresSIGTERMIsKilledAfterTheGraceWithItsGroup() throws {
        let stubborn = scratch.path + "/stubborn"
        try Files.script(stubborn, """
        trap '' TERM
        sleep 300 &
        echo "start $$ $!"
        wait
        """)
        makeSink([(.ringing, [stubborn])], grace: 0.2)
        ring(0, "+15550001")
        let started = line("start")
        let (leader, member) = (try XCTUnwrap(pid_t(started[1])), try XCTUnwrap(pid_t(started[2])))
        hangUp(0)
        waitUntilReaped(leader)
        XCTAssertTrue(ProcessTable.waitForEnd(member, timeout: 5), "its child went with it")
    }

    func testAChildThatOutlivesItsStoppedLeaderGoesWithTheGroupAtOnce() throws {
        // The leader ends on SIGTERM; its child ignores it. The sink lets go of the command when
        // the leader is reaped, long before the grace's SIGKILL would come.
        let leaver = scratch.path + "/leaver"
        try Files.script(leaver, """
        (trap '' TERM; exec sleep 300) &
        echo "start $$ $!"
        wait
        """)
        makeSink([(.ringing, [leaver])], grace: 60)
        ring(0, "+15550001")
        let started = line("start")
        let (leader, member) = (try XCTUnwrap(pid_t(started[1])), try XCTUnwrap(pid_t(started[2])))
        hangUp(0)
        waitUntilReaped(leader)
        XCTAssertTrue(ProcessTable.waitForEnd(member, timeout: 5), "its child went with it, no orphan left")
    }

    func testStdinStaysOpenUntilTheCommandIsStopped() throws {
        // Like `fbcli`, which ends its feedback when its stdin ends. `cat` reads in the background
        // and the shell waits for it with `wait`, which a trapped SIGTERM interrupts: a foreground
        // `cat` let a SIGTERM that landed while the shell forked it be taken by the child before it
        // reset its traps and exec'd, and the shell then waited for a `cat` that never ended. The
        // shell gives a background job /dev/null as stdin unless it is redirected, hence fd 3.
        let reader = scratch.path + "/reader"
        try Files.script(reader, """
        trap 'echo "ended by SIGTERM"; exit 0' TERM
        exec 3<&0
        cat <&3 >/dev/null &
        echo start
        wait $!
        echo "ended by end of file"
        """)
        // A grace no loaded machine reaches: this is about SIGTERM, and a SIGKILL after a short
        // grace would end the shell before its trap could say so.
        makeSink([(.ringing, [reader])], grace: 60)
        ring(0, "+15550001")
        _ = line("start")
        hangUp(0)
        XCTAssertEqual(line("ended").joined(separator: " "), "ended by SIGTERM", "reports: \(reports)")
    }

    func testReloadedCommandsStopWhatIsGoneAndStartWhatIsNewForCallsAlreadyThere() throws {
        let command = try reporter()
        makeSink([(.ringing, [command])])
        ring(0, "+15550001")
        let ringPID = try XCTUnwrap(pid_t(line("start ringing").last ?? ""))
        sink.settings.commands = [ScopedCommand(scope: .live, arguments: [command])]
        _ = line("stop ringing")
        let live = line("start live")
        XCTAssertEqual(live[3], "+15550001", "the live call's environment")
        waitUntilReaped(ringPID)
        sink.settings.commands = [ScopedCommand(scope: .live, arguments: [command])]
        XCTAssertEqual(sink.runningCount, 1, "the same configuration again changes nothing")
    }

    func testACommandAddedByAReloadToASinkWithNoneStartsForTheCallAlreadyRinging() throws {
        let command = try reporter()
        let session = StubSession(liveCalls: { [unowned self] in self.tracker.liveCalls })
        makeSink([], session: session)
        defer { withExtendedLifetime(session) {} }
        ring(0, "+15550001")
        ring(1, "+15550002")
        set(1, .connected, .active)
        sink.settings.commands = [ScopedCommand(scope: .ringing, arguments: [command])]
        let ringing = line("start ringing")
        XCTAssertEqual(ringing[3], "+15550001", "the ringing call is described, not the active one")
        hangUp(0)
        _ = line("stop ringing")
        sink.settings.commands = []
        ring(2, "+15550003")
        XCTAssertEqual(sink.runningCount, 0, "with no command configured again, nothing starts")
        sink.settings.commands = [ScopedCommand(scope: .active, arguments: [command])]
        XCTAssertEqual(line("start active")[3], "+15550002", "the calls are learnt again, as they are now")
    }

    func testFinishingStopsEveryCommandAndWaitsUntilTheyAreReaped() throws {
        let command = try reporter()
        makeSink([(.ringing, [command]), (.live, [command])])
        ring(0, "+15550001")
        let pids = [line("start ringing"), line("start live")].compactMap { pid_t($0.last ?? "") }
        var finished = false
        pipeline.finish { finished = true }
        XCTAssertTrue(loop.run(until: { finished }, timeout: 10))
        for pid in pids { XCTAssertFalse(ProcessTable.isAlive(pid)) }
        ring(1, "+15550002")
        XCTAssertEqual(sink.runningCount, 0, "nothing starts once finishing")
    }

    func testACommandThatCannotStartOrFailsIsSaidOnceAndTriedAgainOnlyWhenItsScopeFillsAgain() throws {
        let failing = scratch.path + "/failing"
        try Files.script(failing, "echo ran; exit 3")
        makeSink([(.ringing, [scratch.path + "/missing"]), (.live, [failing])])
        ring(0, "+15550001")
        _ = line("ran")
        XCTAssertTrue(loop.run(until: { self.reports.count == 2 }, timeout: 10), "\(reports)")
        set(0, .incoming, .ringing)
        feed(.callChanged(mmKey(0), CallObservation(name: "Alice")))
        XCTAssertEqual(reports.count, 2, "not tried again while the call rings")
        XCTAssertTrue(reports.contains { $0.hasPrefix("while.ringing (\(scratch.path)/missing): could not start") }, "\(reports)")
        XCTAssertTrue(reports.contains { $0.hasPrefix("while.live (\(failing)) ended by itself (exited with status 3)") },
                      "\(reports)")
        hangUp(0)
        ring(1, "+15550002")
        _ = line("ran")
        XCTAssertTrue(loop.run(until: { self.reports.count == 4 }, timeout: 10), "tried again for the next call: \(reports)")
    }

    func testTheCommandGetsTheContactAndTheCallsTimes() throws {
        let dump = scratch.path + "/dump"
        try Files.script(dump, "env -0 > \"$0.$TELWATCH_SCOPE.env\"; echo dumped; sleep 60")
        try Files.write(scratch.path + "/contacts.tsv", "+49 171 1234567\tAda \"Countess\" Lovelace\n")
        let contacts = ContactDirectory(path: scratch.path + "/contacts.tsv", loop: nil, report: { XCTFail($0) })
        makeSink([(.active, [dump])], contacts: contacts)
        ring(0, "01711234567")
        set(0, .connected, .active)
        _ = line("dumped")
        let environment = try XCTUnwrap(Files.environmentDump(dump + ".active.env"))
        XCTAssertEqual(environment["TELWATCH_CONTACT"], "Ada \"Countess\" Lovelace", "national form matches")
        XCTAssertEqual(environment["TELWATCH_SCOPE"], "active")
        XCTAssertEqual(environment["TELWATCH_EVENT"], "connected")
        let connectedAt = try XCTUnwrap(environment["TELWATCH_CONNECTED_AT"].flatMap(Double.init))
        XCTAssertEqual(connectedAt, wallClockNow(), accuracy: 10)
        XCTAssertEqual(environment["TELWATCH_DURATION"], "", "still live")
    }
}
