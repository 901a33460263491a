import BGRunManager
import DBus
import Glibc
import Loop
import Processes
import TestSupport
import XCTest

final class BGRunManagerTests: RunTestCase {
    func testLockIsHeldWhileAnyHolderIsInAndReleasedWithTheLast() throws {
        try startHarness()
        let manager = try makeManager()
        XCTAssertTrue(manager.join("a", reason: "incoming"))
        waitForEvent("lock-taken") { $0.isLockTaken }
        XCTAssertEqual(try harness.inhibitors(),
                       [Inhibitor(what: "sleep", who: "telwatch", why: "telwatch background run", mode: "block")])
        XCTAssertTrue(manager.join("b", reason: "dialing"))
        XCTAssertFalse(manager.join("b", reason: "dialing"), "joining twice is a renewal, not a second holder")

        runOneTurn()
        let record = try XCTUnwrap(RunStateStore.read(directory: stateDirectory))
        XCTAssertEqual(record.runID, manager.run?.id)
        XCTAssertEqual(record.reason, "incoming")
        XCTAssertEqual(record.pid, getpid())
        XCTAssertEqual(record.holders, 2)
        XCTAssertEqual(record.lock, .held)
        XCTAssertEqual(try XCTUnwrap(record.leaseLeft(at: wallClockNow())), 4 * 3600, accuracy: 60)

        XCTAssertTrue(manager.leave("a"))
        XCTAssertFalse(manager.leave("a"), "leaving twice is a no-op")
        XCTAssertFalse(manager.leave("never-joined"))
        XCTAssertTrue(manager.isRunning)
        XCTAssertEqual(try harness.inhibitors().count, 1, "one holder is still in")

        XCTAssertTrue(manager.leave("b"))
        XCTAssertFalse(manager.isRunning)
        let stopped = try XCTUnwrap(events { $0.stopReason != nil }.last)
        guard case .stopped(let run, .idle, let duration) = stopped.kind else { return XCTFail("\(stopped)") }
        XCTAssertEqual(run.firstHolder, "a")
        XCTAssertGreaterThan(duration, 0)
        XCTAssertEqual(stopped.time, wallClockNow(), accuracy: 5, "events carry wall-clock time")
        XCTAssertEqual(names().filter { $0 == "run-started" }.count, 1)
        waitForNoInhibitors()
        runOneTurn()
        XCTAssertNil(RunStateStore.read(directory: stateDirectory))
        XCTAssertEqual(manager.armedTimers, 0, "no timer while idle")
    }

    func testConfiguredWhatAndModeReachLogind() throws {
        try startHarness()
        let manager = try makeManager {
            $0.lock = InhibitorRequest(what: "sleep:idle", who: "telwatch-test", why: "testing", mode: "delay")
        }
        manager.join("a", reason: "test")
        waitForEvent("lock-taken") { $0.isLockTaken }
        XCTAssertEqual(try harness.inhibitors(),
                       [Inhibitor(what: "sleep:idle", who: "telwatch-test", why: "testing", mode: "delay")])
    }

    /// The `Inhibit` call and the lease timer are made once and used again by every later run:
    /// each run asks logind with the configured words, and each run's lease is armed and ends it.
    func testEveryRunTakesTheLockWithTheSameWordsAndHasItsOwnLease() throws {
        try startHarness()
        let lease = 0.5
        let manager = try makeManager {
            $0.lock = InhibitorRequest(what: "sleep:idle", who: "telwatch-test", why: "again", mode: "delay")
            $0.lease = lease
        }
        for run in 1...3 {
            manager.join("call-\(run)", reason: "incoming")
            waitForEvent("lock-taken of run \(run)", count: run) { $0.isLockTaken }
            XCTAssertEqual(try harness.inhibitors(),
                           [Inhibitor(what: "sleep:idle", who: "telwatch-test", why: "again", mode: "delay")], "run \(run)")
            XCTAssertEqual(try XCTUnwrap(manager.leaseRemaining, "run \(run)"), lease, accuracy: 0.2)
            if run < 3 {
                XCTAssertTrue(manager.leave("call-\(run)"))
                XCTAssertNil(manager.leaseRemaining, "no lease between runs")
                XCTAssertEqual(manager.armedTimers, 0, "no timer armed between runs")
                waitForNoInhibitors()
            }
        }
        waitForEvent("run-expired", timeout: 5) { $0.isExpired }
        XCTAssertEqual(events { $0.isExpired }.count, 1, "only the last run outlived its lease")
        XCTAssertFalse(manager.isRunning)
        waitForNoInhibitors()
        XCTAssertEqual(manager.armedTimers, 0)
    }

    func testLockDescriptorIsCloseOnExecAndNoHookHoldsIt() throws {
        try startHarness()
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/probe", """
            ls -l /proc/$$/fd > '\(directory)/hook-fds'
            ls -l /proc/self/fd > '\(directory)/child-fds'
            """)
        let hooks = makeHooks(directory: hookDirectory)
        let manager = try makeManager()
        manager.join("a", reason: "test")
        waitForEvent("lock-taken") { $0.isLockTaken }

        let fd = try XCTUnwrap(manager.lock?.heldDescriptor)
        XCTAssertNotEqual(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0, "the lock descriptor must be close-on-exec")
        let target = try XCTUnwrap(Files.descriptorTarget(fd))
        XCTAssertTrue(target.hasPrefix("pipe:["), "dbusmock's lock is a pipe: \(target)")

        XCTAssertEqual(hooks.run(event: "probe", key: HookKey(BGRunManagerTests.self), variables: []), 1)
        waitForOutcomes(1)
        XCTAssertEqual(outcomes.first?.result, .exited(0))
        for file in ["hook-fds", "child-fds"] {
            let listing = try XCTUnwrap(Files.text(directory + "/" + file))
            XCTAssertTrue(listing.contains("0 -> /dev/null"), "\(file) lists the hook's descriptors:\n\(listing)")
            XCTAssertFalse(listing.contains(target), "\(file): a hook holds the lock (\(target)):\n\(listing)")
        }
    }

    func testLogindRestartingMidRunGetsTheLockTakenAgain() throws {
        try startHarness()
        let manager = try makeManager()
        manager.join("a", reason: "test")
        waitForEvent("lock-taken") { $0.isLockTaken }
        XCTAssertEqual(try harness.inhibitors().count, 1)

        harness.killLogind()
        waitForEvent("lock-unavailable after logind went away") { $0.isLockUnavailable }
        XCTAssertFalse(manager.lock?.isHeld ?? true)

        try harness.startLogind()
        waitForEvent("lock-retaken") { $0.isLockRetaken }
        XCTAssertEqual(try harness.inhibitors(),
                       [Inhibitor(what: "sleep", who: "telwatch", why: "telwatch background run", mode: "block")],
                       "the new logind has exactly our lock")
        XCTAssertEqual(names().filter { $0.hasPrefix("lock-") }, ["lock-taken", "lock-unavailable", "lock-retaken"])
        runOneTurn()
        XCTAssertEqual(RunStateStore.read(directory: stateDirectory)?.lock, .held)
        manager.leave("a")
        waitForNoInhibitors()
    }

    func testWithoutLogindTheRunGoesOnAndSaysNothingIsInhibited() throws {
        try startHarness(logind: false)
        let output = try LoopPipe(loop: loop)
        let manager = try makeManager {
            $0.command = ["/bin/sh", "-c", "echo running; exec sleep 1000"]
            $0.commandStdout = .fd(output.writeFD)
        }
        manager.join("a", reason: "test")
        let warning = waitForEvent("lock-unavailable") { $0.isLockUnavailable }
        XCTAssertTrue(warning?.isWarning ?? false)
        XCTAssertTrue(warning?.fields.first?.value.description.contains("nothing is inhibited") ?? false, "\(String(describing: warning))")
        waitFor("the run command") { output.lines.contains("running") }
        XCTAssertTrue(manager.isRunning)
        runOneTurn()
        XCTAssertEqual(RunStateStore.read(directory: stateDirectory)?.lock, .unavailable)
        manager.leave("a")
        waitForEvent("the run command's end") { $0.commandExit != nil }
        XCTAssertEqual(events { $0.stopReason != nil }.count, 1)

        // No bus at all: the same, with its own reason.
        self.manager = nil
        let busless = try makeManager(withLockBus: false, stateDirectory: directory + "/state2")
        busless.join("a", reason: "test")
        XCTAssertTrue(busless.isRunning)
        let last = events.last { $0.kind.isLockUnavailable }
        XCTAssertEqual(last?.fields.first?.value, .text("no system bus connection: nothing is inhibited"))
    }

    func testRunCommandRunsForTheWholeRunAndIsGoneAfterIt() throws {
        try startHarness()
        let output = try LoopPipe(loop: loop)
        let manager = try makeManager {
            $0.command = ["/bin/sh", "-c", "echo \"ready $TELWATCH_RUN_ID $TELWATCH_RUN_REASON\"; exec sleep 1000"]
            $0.commandStdout = .fd(output.writeFD)
        }
        manager.join("a", reason: "incoming")
        waitFor("the run command's line") { !output.lines.isEmpty }
        XCTAssertEqual(output.lines, ["ready \(manager.run?.id ?? "?") incoming"])
        let pid = try XCTUnwrap(manager.runCommand?.pid)
        XCTAssertTrue(ProcessTable.isAlive(pid))
        XCTAssertEqual(events { if case .runCommandStarted(pid: pid) = $0 { return true }; return false }.count, 1)

        manager.leave("a")
        let exited = waitForEvent("run-command-exited") { $0.commandExit != nil }
        XCTAssertEqual(exited?.kind.commandExit?.status, .signaled(SIGTERM))
        XCTAssertEqual(exited?.kind.commandExit?.early, false)
        XCTAssertFalse(ProcessTable.isAlive(pid))
        XCTAssertEqual(ProcessTable.liveMembers(ofGroup: pid), [])
    }

    func testRunCommandThatIgnoresSIGTERMIsKilledAfterTheGrace() throws {
        try startHarness()
        let output = try LoopPipe(loop: loop)
        let grace = 0.4
        let manager = try makeManager {
            // The shell and its sleep both ignore SIGTERM (an ignored signal stays ignored across exec).
            $0.command = ["/bin/sh", "-c", "trap '' TERM; sleep 1000 & echo ready; wait"]
            $0.commandStdout = .fd(output.writeFD)
            $0.commandGrace = grace
        }
        manager.join("a", reason: "test")
        waitFor("the run command to ignore SIGTERM") { output.lines == ["ready"] }
        let pid = try XCTUnwrap(manager.runCommand?.pid)
        XCTAssertEqual(ProcessTable.liveMembers(ofGroup: pid).count, 2, "the shell and its sleep")

        let stoppedAt = monotonicNow()
        manager.leave("a")
        waitForEvent("run-command-exited") { $0.commandExit != nil }
        let exitedAt = try XCTUnwrap(arrival { $0.commandExit != nil })
        XCTAssertEqual(events.last { $0.kind.commandExit != nil }?.kind.commandExit?.status, .signaled(SIGKILL))
        XCTAssertGreaterThanOrEqual(exitedAt - stoppedAt, grace - 0.01, "SIGKILL only after the grace")
        XCTAssertLessThan(exitedAt - stoppedAt, grace + 2)
        waitFor("the group to be gone") { ProcessTable.liveMembers(ofGroup: pid).isEmpty }
    }

    func testRunCommandThatExitsEarlyIsAnEventAndTheRunGoesOn() throws {
        try startHarness()
        let manager = try makeManager { $0.command = ["/bin/sh", "-c", "exit 3"] }
        manager.join("a", reason: "test")
        let exited = waitForEvent("run-command-exited") { $0.commandExit != nil }
        XCTAssertEqual(exited?.kind.commandExit?.status, .exited(3))
        XCTAssertEqual(exited?.kind.commandExit?.early, true)
        XCTAssertTrue(exited?.isWarning ?? false)
        XCTAssertTrue(manager.isRunning)
        XCTAssertNil(manager.runCommand)
        waitForEvent("lock-taken") { $0.isLockTaken }
    }

    func testLeaseEndsAStuckRunAndActivityRenewsIt() throws {
        try startHarness()
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        for event in ["run-expired", "run-stopped"] {
            try Files.script(hookDirectory + "/" + event, "env -0 > '\(directory)/\(event).env'")
        }
        makeHooks(directory: hookDirectory)
        let lease = 0.6
        let manager = try makeManager { $0.lease = lease }
        manager.join("stuck", reason: "incoming")
        waitForEvent("lock-taken") { $0.isLockTaken }

        var renewedAt = 0.0
        let renewal = try loop.timer { [unowned manager] in
            renewedAt = monotonicNow()
            XCTAssertTrue(manager.renew("stuck"))
        }
        renewal.schedule(after: lease / 2)
        waitForEvent("run-expired", timeout: 5) { $0.isExpired }
        let expiredAt = try XCTUnwrap(arrival { $0.isExpired })
        XCTAssertGreaterThan(renewedAt, 0)
        XCTAssertGreaterThanOrEqual(expiredAt - renewedAt, lease - 0.01, "the renewal restarted the lease")

        let expiredIndex = try XCTUnwrap(events.firstIndex { $0.kind.isExpired })
        XCTAssertEqual(events[expiredIndex + 1].kind.stopReason, "expired")
        XCTAssertFalse(manager.isRunning)
        XCTAssertFalse(manager.leave("stuck"), "the expired run has no holders left")
        waitForNoInhibitors()

        waitForOutcomes(2)
        XCTAssertEqual(outcomes.map(\.event), ["run-expired", "run-stopped"])
        XCTAssertEqual(outcomes.map(\.result), [.exited(0), .exited(0)])
        let stoppedEnvironment = try XCTUnwrap(Files.environmentDump(directory + "/run-stopped.env"))
        XCTAssertEqual(stoppedEnvironment["TELWATCH_EVENT"], "run-stopped")
        XCTAssertEqual(stoppedEnvironment["TELWATCH_RUN_REASON"], "expired")
        XCTAssertEqual(stoppedEnvironment["TELWATCH_RUN_START_REASON"], "incoming")
        XCTAssertEqual(stoppedEnvironment["TELWATCH_RUN_HOLDER"], "stuck")
        let duration = try XCTUnwrap(stoppedEnvironment["TELWATCH_RUN_DURATION"].flatMap(Double.init))
        XCTAssertGreaterThanOrEqual(duration, lease * 1.5 - 0.02)
        let expiredEnvironment = try XCTUnwrap(Files.environmentDump(directory + "/run-expired.env"))
        XCTAssertEqual(expiredEnvironment["TELWATCH_RUN_ID"], stoppedEnvironment["TELWATCH_RUN_ID"])
        runOneTurn()
        XCTAssertNil(RunStateStore.read(directory: stateDirectory))
    }

    func testHeartbeatBeatsOnlyWhileARunLives() throws {
        try startHarness()
        let manager = try makeManager {
            $0.heartbeat = 0.05
            $0.lease = nil
        }
        XCTAssertEqual(manager.armedTimers, 0)
        manager.join("a", reason: "test")
        XCTAssertEqual(manager.armedTimers, 1)
        waitForEvent("three heartbeats", count: 3) { $0.isHeartbeat }
        let beats = events { $0.isHeartbeat }.prefix(3).map(\.kind)
        let runID = try XCTUnwrap(manager.run?.id)
        guard case .heartbeat(runID, 1, let first) = beats[0], case .heartbeat(runID, 3, let third) = beats[2] else {
            return XCTFail("\(beats)")
        }
        XCTAssertLessThan(first, third)
        manager.leave("a")
        XCTAssertEqual(manager.armedTimers, 0, "no heartbeat timer once the run ended")
    }

    func testKernelWakelockIsHeldForTheRunWhereTheKernelHasOne() throws {
        try startHarness()
        let power = directory + "/power"
        try Files.makeDirectory(power)
        try Files.write(power + "/wake_lock", "")
        try Files.write(power + "/wake_unlock", "")
        let manager = try makeManager { $0.wakelock = KernelWakelock(name: "telwatch-test", directory: power) }
        manager.join("a", reason: "test")
        XCTAssertEqual(Files.text(power + "/wake_lock"), "telwatch-test")
        XCTAssertEqual(Files.text(power + "/wake_unlock"), "")
        XCTAssertEqual(events { if case .wakelockTaken = $0 { return true }; return false }.count, 1)
        runOneTurn()
        XCTAssertEqual(RunStateStore.read(directory: stateDirectory)?.wakelock?.name, "telwatch-test")
        manager.leave("a")
        XCTAssertEqual(Files.text(power + "/wake_unlock"), "telwatch-test")

        self.manager = nil
        let without = try makeManager(stateDirectory: directory + "/state2") {
            $0.wakelock = KernelWakelock(name: "telwatch-test", directory: self.directory + "/no-such-power")
        }
        without.join("a", reason: "test")
        XCTAssertTrue(without.isRunning)
        XCTAssertEqual(events { if case .wakelockUnavailable = $0 { return true }; return false }.count, 1)
        runOneTurn()
        XCTAssertNil(RunStateStore.read(directory: directory + "/state2")?.wakelock)
    }

    /// A real process holds the run, is SIGKILLed, and the next telwatch cleans up after it.
    func testSIGKILLReleasesTheLockAndTheNextStartRecoversTheStaleRun() throws {
        try startHarness()
        let probePath = BuildProducts.path("telwatch-run-probe")
        guard access(probePath, X_OK) == 0 else { return XCTFail("\(probePath) is not built (swift build builds it)") }
        let power = directory + "/power"
        try Files.makeDirectory(power)
        try Files.write(power + "/wake_lock", "")
        try Files.write(power + "/wake_unlock", "")

        let probe = try harness.fixture.start([probePath, stateDirectory, power], name: "run-probe")
        var probeLines: [String] = []
        XCTAssertNotNil(probe.readLine(timeout: 10, where: { $0.hasPrefix("lock-taken") }) { probeLines.append($0) },
                        "the probe never held its lock: \(probeLines) \(probe.log())")
        let started = try XCTUnwrap(probeLines.first { $0.hasPrefix("run-started") })
        let probeRunID = try XCTUnwrap(started.split(separator: " ").first { $0.hasPrefix("run_id=") }?.dropFirst(7))
        XCTAssertEqual(try harness.inhibitors().map(\.who), ["telwatch"])
        XCTAssertEqual(Files.text(power + "/wake_lock"), "telwatch-run-probe")

        let commandLine = try XCTUnwrap(probeLines.first { $0.hasPrefix("run-command-started") })
        let commandPID = try XCTUnwrap(commandLine.split(separator: " ").first { $0.hasPrefix("pid=") }
            .flatMap { pid_t($0.dropFirst(4)) })
        XCTAssertEqual(kill(commandPID, 0), 0, "the run command runs")

        kill(probe.pid, SIGKILL)
        XCTAssertEqual(probe.wait(timeout: 5), .signaled(SIGKILL))
        waitForNoInhibitors()
        XCTAssertTrue(ProcessTable.waitForEnd(commandPID, timeout: 5), "the run command does not outlive a killed telwatch")
        let left = try XCTUnwrap(RunStateStore.read(directory: stateDirectory), "a killed telwatch leaves its record")
        XCTAssertEqual(left.runID, String(probeRunID))
        XCTAssertEqual(left.pid, probe.pid)

        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/run-stopped",
                         "echo \"$TELWATCH_RUN_REASON $TELWATCH_RUN_ID $TELWATCH_STALE_PID\" >> '\(directory)/stopped.log'")
        makeHooks(directory: hookDirectory)
        _ = try makeManager()
        let stale = try XCTUnwrap(events { $0.isStale }.first)
        XCTAssertEqual(stale.kind, .staleRunRecovered(left))
        XCTAssertTrue(stale.isWarning)
        XCTAssertNil(RunStateStore.read(directory: stateDirectory), "the record is closed")
        XCTAssertEqual(Files.text(power + "/wake_unlock"), "telwatch-run-probe", "the kernel wakelock is released")
        waitForOutcomes(1)
        XCTAssertEqual(outcomes.first?.result, .exited(0))
        XCTAssertEqual(Files.text(directory + "/stopped.log"), "stale \(probeRunID) \(probe.pid)\n")

        // Reported once: the next start finds nothing.
        manager = nil
        forgetEvents()
        _ = try makeManager()
        XCTAssertEqual(events.count, 0)
        XCTAssertTrue(hooks?.isIdle ?? false)
        XCTAssertEqual(Files.text(directory + "/stopped.log"), "stale \(probeRunID) \(probe.pid)\n")
    }

    func testALiveTelwatchKeepsItsStateDirectory() throws {
        try startHarness()
        let first = try makeManager()
        first.join("a", reason: "test")
        runOneTurn()
        XCTAssertThrowsError(try BGRunManager(loop: loop, lockBus: nil, configuration: RunConfiguration(stateDirectory: stateDirectory)) { _ in }) {
            XCTAssertEqual($0 as? RunError, .stateDirectoryInUse(self.stateDirectory))
        }
        XCTAssertNotNil(RunStateStore.read(directory: stateDirectory), "the live run was not taken for stale")
    }

    func testShutdownEndsTheRunAndReapsEverythingWithinItsBound() throws {
        try startHarness()
        let hookDirectory = directory + "/hooks"
        try Files.makeDirectory(hookDirectory)
        try Files.script(hookDirectory + "/run-stopped", "exec sleep 1000")
        makeHooks(directory: hookDirectory, timeout: 60)
        let output = try LoopPipe(loop: loop)
        let shutdownTimeout = 0.8
        let manager = try makeManager {
            $0.command = ["/bin/sh", "-c", "trap '' TERM; echo ready; exec sleep 1000"]
            $0.commandStdout = .fd(output.writeFD)
            $0.commandGrace = 0.3
            $0.shutdownTimeout = shutdownTimeout
        }
        manager.join("a", reason: "test")
        waitForEvent("lock-taken") { $0.isLockTaken }
        waitFor("the run command") { output.lines == ["ready"] }
        let commandPID = try XCTUnwrap(manager.runCommand?.pid)

        let began = monotonicNow()
        var finished: Double?
        manager.shutdown { finished = monotonicNow() }
        waitFor("shutdown to finish", timeout: 10) { finished != nil }
        let took = try XCTUnwrap(finished) - began
        XCTAssertGreaterThanOrEqual(took, shutdownTimeout - 0.01, "it waited for the hanging hook up to its bound")
        XCTAssertLessThan(took, shutdownTimeout + 2.5)
        XCTAssertTrue(manager.isShutDown)
        XCTAssertEqual(events { $0.stopReason != nil }.map(\.kind.stopReason), ["shutdown"])
        XCTAssertEqual(events.last { $0.kind.commandExit != nil }?.kind.commandExit?.status, .signaled(SIGKILL))
        XCTAssertEqual(outcomes.map(\.result), [.killed(signal: SIGKILL)])
        XCTAssertFalse(ProcessTable.isAlive(commandPID))
        XCTAssertFalse(outcomes.compactMap(\.pid).contains { ProcessTable.isAlive($0) })
        XCTAssertFalse(manager.join("b", reason: "test"), "no run after shutdown")
        waitForNoInhibitors()
        XCTAssertNil(RunStateStore.read(directory: stateDirectory))
    }

    func testHooksOfAnEventRunInTheirDocumentedOrderAndFailuresAreReported() throws {
        try startHarness(logind: false)
        let hookDirectory = directory + "/hooks"
        let log = directory + "/hooks.log"
        try Files.makeDirectory(hookDirectory)
        try Files.makeDirectory(hookDirectory + "/incoming.d")
        try Files.makeDirectory(hookDirectory + "/incoming.d/40-directory")
        try Files.script(hookDirectory + "/incoming", "echo \"single $TELWATCH_EVENT\" >> '\(log)'")
        try Files.script(hookDirectory + "/incoming.d/20-b", "echo 20-b >> '\(log)'")
        try Files.script(hookDirectory + "/incoming.d/10-a", "echo 10-a >> '\(log)'; exit 4")
        try Files.script(hookDirectory + "/incoming.d/.hidden", "echo hidden >> '\(log)'")
        try Files.script(hookDirectory + "/incoming.d/20-b~", "echo backup >> '\(log)'")
        try Files.write(hookDirectory + "/incoming.d/30-not-executable", "#!/bin/sh\necho plain >> '\(log)'\n")
        let configured = ["/bin/sh", "-c", "echo \"configured $TELWATCH_EVENT $0\" >> '\(log)'", "argv0"]
        let hooks = makeHooks(directory: hookDirectory, commands: ["incoming": [configured, ["/no/such/hook"]]])

        XCTAssertEqual(hooks.hooks(for: "incoming"), [
            [hookDirectory + "/incoming"], [hookDirectory + "/incoming.d/10-a"], [hookDirectory + "/incoming.d/20-b"],
            configured, ["/no/such/hook"],
        ])
        XCTAssertEqual(hooks.hooks(for: "dialing"), [])
        XCTAssertEqual(hooks.hooks(for: "../hooks/incoming"), [], "an event name never climbs out of the directory")

        XCTAssertEqual(hooks.run(event: "incoming", key: HookKey(BGRunManagerTests.self), variables: []), 5)
        waitForOutcomes(5)
        XCTAssertEqual(outcomes.map(\.result).prefix(4), [.exited(0), .exited(4), .exited(0), .exited(0)])
        guard case .failedToStart = outcomes[4].result else { return XCTFail("\(outcomes[4].result)") }
        XCTAssertFalse(outcomes[1].result.isSuccess)
        XCTAssertEqual(Files.text(log), "single incoming\n10-a\n20-b\nconfigured incoming argv0\n")
        XCTAssertTrue(hooks.isIdle)
    }

    func testRunRecordKeepsAnyReasonAndTheStateDirectoryFollowsTheEnvironment() throws {
        let record = RunRecord(
            runID: "0123456789abcdef", reason: "a\\b\nc=d\r", pid: 42, startedAt: 1_700_000_000.25, updatedAt: 1_700_000_001,
            holders: 2, lease: 14400, leaseExpiresAt: 1_700_014_400.5, lock: .held,
            wakelock: KernelWakelock(name: "telwatch", directory: "/sys/power"))
        XCTAssertEqual(RunRecord(encoded: record.encoded), record)
        XCTAssertEqual(record.encoded.split(separator: "\n").count, 12, "one line per field")
        XCTAssertNil(RunRecord(encoded: "version=2\nrun_id=x\n"))
        XCTAssertEqual(record.heldFor(at: 1_700_000_010.25), 10)
        XCTAssertEqual(record.leaseLeft(at: 1_700_014_400), 0.5)

        // A record edited by hand or by someone else (a later line wins): a time that is no number, or a command
        // whose group signal would reach every process (-1) or telwatch's own group (0).
        let fields = record.encoded
        for (key, value) in [("started_at", "inf"), ("updated_at", "nan"), ("started_at", "-inf")] {
            XCTAssertNil(RunRecord(encoded: fields + "\(key)=\(value)\n"), "\(key)=\(value)")
        }
        XCTAssertNil(RunRecord(encoded: fields + "lease_expires_at=inf\n")?.leaseExpiresAt)
        for pid in ["-1", "0", "1"] {
            XCTAssertNil(RunRecord(encoded: fields + "command_pid=\(pid)\ncommand_start=1\n")?.command, pid)
        }
        XCTAssertEqual(RunRecord(encoded: fields + "command_pid=4242\ncommand_start=1\n")?.command,
                       ProcessIdentity(pid: 4242, startTime: 1))

        XCTAssertEqual(RunStateStore.defaultDirectory(environment: [
            "HOME=/home/u", "XDG_STATE_HOME=/xdg", "STATE_DIRECTORY=/var/lib/telwatch:/other",
        ]), "/var/lib/telwatch")
        XCTAssertEqual(RunStateStore.defaultDirectory(environment: ["HOME=/home/u", "XDG_STATE_HOME=/xdg"]),
                       "/xdg/telwatch")
        XCTAssertEqual(RunStateStore.defaultDirectory(environment: ["HOME=/home/u", "XDG_STATE_HOME=relative"]),
                       "/home/u/.local/state/telwatch", "XDG_STATE_HOME must be absolute to count")
        XCTAssertNil(RunStateStore.defaultDirectory(environment: []))
    }
}
