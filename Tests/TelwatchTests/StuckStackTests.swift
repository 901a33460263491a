import BGRunManager
import CallMonitor
import DBus
import Foundation
import Glibc
import Loop
import Processes
import TestSupport
import XCTest

/// `telwatch watch` against a ModemManager that stops answering (the fake's stuck-stack controls,
/// Tests/Fixtures/dbusmock/README.md):
/// what a user notices when the stack hoards telwatch's calls, is slow, floods, or answers with
/// garbage. dbus-daemon counts every unanswered call against telwatch's connection until the
/// stack answers or leaves (docs/modem-stacks.md §8); a ring must still be seen, and the sleep
/// lock still taken, at once.
final class StuckStackTests: CommandTestCase {
    static let overdueNotice = "has not answered yet"

    // MARK: The stand-in

    /// How the fake answers a call's `Properties.GetAll` (`RingAnswering`, Tests/Fixtures/dbusmock/README.md).
    private enum ReadAnswer: String {
        case late
        case never
        case hostileError = "hostile-error"
    }

    /// A ringing incoming call whose GetAll the fake answers as `answer` says (`late`: after `delay` seconds).
    private func ring(_ number: String, answering answer: ReadAnswer, after delay: Double = 0) throws -> String {
        try XCTUnwrap(control("RingAnswering", [.objectPath(try ObjectPath(Self.modem0)), .string(number),
                                                .string(answer.rawValue), .double(delay)]).first?.objectPath?.rawValue)
    }

    // MARK: Looking at telwatch

    private func holdsLock(_ list: [Inhibitor]) -> Bool { list.contains { $0.who == "telwatch" } }

    /// Seconds from `start` until logind lists telwatch's lock (`held`) or no longer does; nil
    /// when that did not happen within `timeout`.
    private func lockListed(_ held: Bool, since start: Double, timeout: Double) -> Double? {
        guard logind.waitForInhibitors(timeout: timeout, { self.holdsLock($0) == held }) != nil else { return nil }
        return monotonicNow() - start
    }

    /// Waits (bounded) until telwatch's stderr holds `text`, woken by inotify at each write to the
    /// log rather than by polling it.
    private func waitForStderr(_ process: TestProcess, containing text: String, timeout: Double) -> Bool {
        guard let path = process.logPath else { return false }
        return Files.waitUntil(path, timeout: timeout) { process.log().contains(text) }
    }

    private func residentBytes(_ pid: pid_t) -> Int? {
        guard let status = Files.text("/proc/\(pid)/status"),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1024
    }

    /// A FIFO hooks write one line to; the test holds a write end too, so it never reads an end
    /// of file between two hooks.
    private final class HookLog {
        let path: String
        let reader: LineReader
        private let readFD: Int32
        private let writeFD: Int32

        init(path: String) throws {
            guard mkfifo(path, 0o600) == 0 else { throw FixtureError("mkfifo \(path) failed") }
            let readFD = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            let writeFD = readFD >= 0 ? open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1
            guard writeFD >= 0 else {
                if readFD >= 0 { close(readFD) }
                throw FixtureError("open \(path) failed")
            }
            self.path = path
            self.readFD = readFD
            self.writeFD = writeFD
            reader = LineReader(fd: readFD)
        }

        deinit {
            close(readFD)
            close(writeFD)
        }

        /// `count` lines, or fewer when they did not all come within `timeout`.
        func lines(_ count: Int, timeout: Double) -> [String] {
            let deadline = monotonicNow() + timeout
            var lines: [String] = []
            while lines.count < count, case .line(let line) = reader.next(timeout: max(0, deadline - monotonicNow())) {
                lines.append(line)
            }
            return lines
        }
    }

    /// The first line of each of `events`, in whatever order they come (bounded).
    private func nextEvents(_ watch: TestProcess, _ events: Set<String>, timeout: Double = 10) -> [String: [String: Any]] {
        var found: [String: [String: Any]] = [:]
        let deadline = monotonicNow() + timeout
        while found.count < events.count, let line = watch.readLine(timeout: max(0, deadline - monotonicNow())) {
            guard let object = JSONLine.object(line), let event = object["event"] as? String else {
                XCTFail("not a JSON object: \(line)")
                continue
            }
            if events.contains(event), found[event] == nil { found[event] = object }
        }
        return found
    }

    /// Reads `incoming` lines until `count` have come (bounded); returns their call ids by path.
    private func incomingCalls(_ watch: TestProcess, count: Int, timeout: Double) -> [String: String] {
        var calls: [String: String] = [:]
        let deadline = monotonicNow() + timeout
        while calls.count < count,
              let line = watch.readLine(timeout: max(0, deadline - monotonicNow()), where: {
                  $0.hasPrefix(#"{"event":"incoming""#) }) {
            guard let object = JSONLine.object(line), let path = object["path"] as? String,
                  let id = object["call_id"] as? String else { continue }
            calls[path] = id
        }
        return calls
    }

    // MARK: Tests

    /// 200 calls whose reads the stack never answers, then real rings, each seen and the lock
    /// listed within a second: the first once telwatch's reads have timed out, a second after
    /// more of its reads went out to the stack and stuck there, and a third after the stack
    /// deleted the hoarded calls (the run they held ends; the ring alone takes the lock again).
    func testARingGetsThroughAStackThatHoardsUnansweredCalls() throws {
        try startModemManager()
        let watch = try startWatch()
        let began = monotonicNow()
        let flooded = try control("FloodUnanswered", [.objectPath(try ObjectPath(Self.modem0)), .uint32(200)])
        XCTAssertEqual(flooded.first?.uint32, 200)
        // The reads' 10 s timeout has passed once telwatch says so; the stack still holds them.
        XCTAssertTrue(waitForStderr(watch, containing: Self.overdueNotice, timeout: 20),
                      "no overdue read reported:\n\(watch.log())")
        let overdueAfter = monotonicNow() - began
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(control("HeldReads").first?.uint32), 32,
                                    "the stack holds telwatch's reads unanswered")

        var timings: [String] = []
        /// Rings, and checks the call's `incoming` line and logind's lock come within 1 s.
        func ringsThrough(_ number: String, _ what: String) throws -> String {
            let rung = monotonicNow()
            let call = try ring(number)
            var seen: [[String: Any]] = []
            let incoming = nextEvent(watch, "incoming", timeout: 1, seen: &seen)
            let seenAfter = monotonicNow() - rung
            XCTAssertEqual(incoming?["path"] as? String, call, "\(what): no incoming within 1 s:\n\(watch.log())")
            XCTAssertEqual(incoming?["number"] as? String, number, what)
            let listedAfter = lockListed(true, since: rung, timeout: 1)
            XCTAssertNotNil(listedAfter, "\(what): the lock is listed within 1 s of the ring")
            timings.append(String(format: "%@: seen %.0f ms, lock %.0f ms", what, seenAfter * 1000,
                                  (listedAfter ?? -1) * 1000))
            return call
        }

        let first = try ringsThrough("+15550100", "first ring")
        try setState(first, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(watch, "disconnected"))
        // Answered, the first ring let telwatch send more reads, which the stack keeps too.
        let second = try ringsThrough("+15550101", "second ring")
        try setState(second, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(watch, "disconnected"))

        XCTAssertEqual(try control("DeleteUnanswered").first?.uint32, 200)
        XCTAssertEqual(nextEvent(watch, "run-stopped", timeout: 2)?["reason"] as? String, "idle",
                       "the deleted calls let the run go:\n\(watch.log())")
        XCTAssertNotNil(lockListed(false, since: monotonicNow(), timeout: 2), "the lock is released")
        _ = try ringsThrough("+15550102", "after the deletion")
        print("stuck stack: reads overdue after " + String(format: "%.1f s; ", overdueAfter)
              + timings.joined(separator: "; "))
    }

    /// A read answered after 12 s (past telwatch's 10 s timeout) still reports the call with its
    /// number, and the lock is held from the CallAdded on, with no gap when the call becomes known.
    func testALateAnswerStillReportsTheCallAndTheLockIsHeldMeanwhile() throws {
        try startModemManager()
        let watch = try startWatch()
        let rung = monotonicNow()
        let call = try ring("+15550200", answering: .late, after: 12)
        var seen: [[String: Any]] = []
        XCTAssertNotNil(nextEvent(watch, "lock-taken", timeout: 2, seen: &seen),
                        "the lock is taken on the CallAdded:\n\(watch.log())")
        XCTAssertNotNil(lockListed(true, since: rung, timeout: 2), "logind lists the lock before the answer")

        let incoming = try XCTUnwrap(nextEvent(watch, "incoming", timeout: 16, seen: &seen),
                                     "the late answer reported no call:\n\(watch.log())")
        let answeredAfter = monotonicNow() - rung
        XCTAssertGreaterThanOrEqual(answeredAfter, 11.5, "the call is known from the answer, not before")
        XCTAssertEqual(incoming["path"] as? String, call)
        XCTAssertEqual(incoming["number"] as? String, "+15550200")
        XCTAssertEqual(incoming["detail"] as? String, "ringing")
        XCTAssertEqual(seen.filter { $0["event"] as? String == "run-started" }.count, 1, "one run: \(seen)")
        XCTAssertFalse(seen.contains { $0["event"] as? String == "run-stopped" }, "the run never lapsed: \(seen)")
        XCTAssertTrue(watch.log().contains(Self.overdueNotice), "the wait is said on stderr:\n\(watch.log())")
        XCTAssertTrue(holdsLock(try logind.inhibitors()), "the call holds the lock now")

        try setState(call, .terminated, reason: .terminated)
        XCTAssertEqual(nextEvent(watch, "disconnected")?["missed"] as? Bool, true)
        XCTAssertEqual(nextEvent(watch, "run-stopped")?["reason"] as? String, "idle")
        XCTAssertNotNil(lockListed(false, since: monotonicNow(), timeout: 5), "the lock is released")
    }

    /// A call whose read is never answered holds the lock on the stack's word, and lets it go the
    /// moment the stack deletes it: it never became a call, so no call event is written.
    func testANeverAnsweredCallHoldsTheLockUntilTheStackDeletesIt() throws {
        try startModemManager()
        let watch = try startWatch()
        let rung = monotonicNow()
        let call = try ring("+15550300", answering: .never)
        var seen: [[String: Any]] = []
        XCTAssertEqual(nextEvent(watch, "run-started", timeout: 2, seen: &seen)?["reason"] as? String, "new-call",
                       "the CallAdded starts the run:\n\(watch.log())")
        XCTAssertNotNil(lockListed(true, since: rung, timeout: 2), "logind lists the lock")

        let deleted = monotonicNow()
        try control("Delete", [.objectPath(try ObjectPath(call))])
        XCTAssertEqual(nextEvent(watch, "run-stopped", timeout: 2, seen: &seen)?["reason"] as? String, "idle",
                       "the deletion ends the run:\n\(watch.log())")
        let releasedAfter = lockListed(false, since: deleted, timeout: 2)
        XCTAssertNotNil(releasedAfter, "logind's list empties once the stack deleted the call")
        let callEvents = ["incoming", "dialing", "connected", "disconnected", "missed", "updated"]
        XCTAssertFalse(seen.contains { callEvents.contains($0["event"] as? String ?? "") }, "\(seen)")
        print(String(format: "never-answered call: lock released %.0f ms after the deletion", (releasedAfter ?? -1) * 1000))
    }

    /// 30,000 number changes of one call, each an `updated` event, with an `updated` hook that
    /// takes a second: every event still comes (nothing waits for a hook), telwatch's memory
    /// stays put (waiting hooks coalesce), and a call ringing while the hook is busy is seen at once.
    func testAFloodOfUpdatesWithASlowHookKeepsMemoryFlatAndTelwatchResponsive() throws {
        let hooks = logind.directory + "/hooks"
        try Files.makeDirectory(hooks)
        try Files.script(hooks + "/updated", "sleep 1")
        try startModemManager()
        let watch = try startWatch(["--hooks", hooks, "--hook-timeout", "30s"])
        let call = try ring("+15550400")
        let first = nextEvents(watch, ["incoming", "lock-taken"])
        XCTAssertEqual(first["incoming"]?["path"] as? String, call)
        XCTAssertNotNil(first["lock-taken"], "\(first)")
        let before = try XCTUnwrap(residentBytes(watch.pid))

        // Under AddressSanitizer telwatch runs a few times slower and its RSS counts ASan's
        // quarantine: a smaller flood, and the memory bounds are left to the normal build.
        let asan = Sanitizers.addressSanitizer
        let flood = asan ? 10_000 : 30_000
        let flooded = monotonicNow()
        try control("FloodNumbers", [.objectPath(try ObjectPath(call)), .uint32(UInt32(flood))])
        var updated = 0
        var firstAmiss: String?
        var peak = before
        let deadline = flooded + 30
        while updated < flood, let line = watch.readLine(timeout: max(0, deadline - monotonicNow()), where: {
            $0.hasPrefix(#"{"event":"updated""#) }) {
            if firstAmiss == nil, !line.contains(String(format: #""number":"+1555%07d""#, updated)) { firstAmiss = line }
            updated += 1
            if updated % 1000 == 0, let now = residentBytes(watch.pid) { peak = max(peak, now) }
        }
        let floodTook = monotonicNow() - flooded
        XCTAssertEqual(updated, flood, "every change is an updated event:\n\(watch.log())")
        XCTAssertNil(firstAmiss, "every number, in the order the stack set them")
        let after = try XCTUnwrap(residentBytes(watch.pid))
        let mebibyte = 1024.0 * 1024.0
        if !asan {
            XCTAssertLessThanOrEqual(after - before, 2 * 1024 * 1024,
                                     String(format: "RSS %.2f → %.2f MiB", Double(before) / mebibyte, Double(after) / mebibyte))
            XCTAssertLessThanOrEqual(peak - before, 2 * 1024 * 1024,
                                     String(format: "RSS peaked at %.2f MiB during the flood", Double(peak) / mebibyte))
        }

        // The updated hooks are still busy: one runs its second, the newest update's waits.
        let rung = monotonicNow()
        let second = try ring("+15550401")
        let incoming = nextEvent(watch, "incoming", timeout: 1)
        let seenAfter = monotonicNow() - rung
        XCTAssertEqual(incoming?["path"] as? String, second, "a ring after the flood is seen within 1 s")
        print(String(format: "flood of %d updates: all out in %.1f s; RSS %.2f → %.2f MiB (peak %.2f); "
                     + "next ring seen in %.0f ms", flood, floodTook, Double(before) / mebibyte,
                     Double(after) / mebibyte, Double(peak) / mebibyte, seenAfter * 1000))
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0))
        XCTAssertFalse(watch.log().contains("hook "), "no hook failed or was dropped:\n\(watch.log())")
    }

    /// 300 calls ring at once; each `incoming` hook records how many hooks run beside it: never
    /// more than the cap, and every call's hook runs.
    func testThreeHundredCallsRunEveryHookWithinTheConcurrencyCap() throws {
        let cap = HookSettings.defaultMaxRunning()
        let directory = logind.directory
        let hooks = directory + "/hooks"
        try Files.makeDirectory(hooks)
        try Files.write(directory + "/running", "0\n")
        let log = try HookLog(path: directory + "/hook-log")
        // The count is changed under flock, so two hooks starting together cannot both read one value.
        try Files.script(hooks + "/incoming", """
            exec 9>>"\(directory)/running.lock"
            flock 9; now=$(( $(cat "\(directory)/running") + 1 )); echo $now > "\(directory)/running"; flock -u 9
            sleep 0.1
            flock 9; echo $(( $(cat "\(directory)/running") - 1 )) > "\(directory)/running"; flock -u 9
            printf '%s %s\\n' "$TELWATCH_CALL_ID" "$now" > "\(log.path)"
            """)
        try startModemManager()
        let watch = try startWatch(["--hooks", hooks])
        let count = 300
        let started = monotonicNow()
        for index in 0..<count { _ = try ring(String(format: "+1555%07d", index)) }
        let calls = incomingCalls(watch, count: count, timeout: 20)
        XCTAssertEqual(calls.count, count, "every call rings:\n\(watch.log())")

        let lines = log.lines(count, timeout: 60)
        let elapsed = monotonicNow() - started
        XCTAssertEqual(lines.count, count, "every call's hook ran:\n\(watch.log())")
        let records = lines.map { $0.split(separator: " ") }
        XCTAssertEqual(Set(records.compactMap { $0.first.map(String.init) }), Set(calls.values),
                       "one hook per call")
        let most = records.compactMap { $0.last.flatMap { Int($0) } }.max() ?? 0
        XCTAssertLessThanOrEqual(most, cap, "at most \(cap) hooks at once")
        XCTAssertGreaterThan(most, 1, "hooks of different calls run side by side")
        print(String(format: "%d calls: every hook ran in %.1f s, at most %d at once (cap %d)", count, elapsed, most, cap))
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0))
        XCTAssertFalse(watch.log().contains("hook "), "no hook failed:\n\(watch.log())")
    }

    /// With 64 descriptors (`ulimit -n 64`), hooks and 100 calls: the lock is listed, the run
    /// recorded and its record removed at the end, every hook runs, and no descriptor runs out.
    func testWithSixtyFourDescriptorsAHundredCallsKeepTheLockRecordAndHooks() throws {
        let directory = logind.directory
        let hooks = directory + "/hooks"
        try Files.makeDirectory(hooks)
        let log = try HookLog(path: directory + "/hook-log")
        for event in ["incoming", "disconnected"] {
            try Files.script(hooks + "/" + event, "sleep 0.05\necho \"$TELWATCH_EVENT $TELWATCH_CALL_ID\" > \"\(log.path)\"")
        }
        try startModemManager()
        let watch = try fixture.start(["sh", "-c", #"ulimit -n 64 && exec "$@""#, "sh", Self.telwatch,
                                       "--bus", fixture.address, "--json", "--backend", "modemmanager",
                                       "--state-dir", stateDirectory, "--hooks", hooks], name: "telwatch")
        XCTAssertNotNil(nextEvent(watch, "ready", timeout: 15), "never ready:\n\(watch.log())")
        let limits = Files.text("/proc/\(watch.pid)/limits") ?? ""
        XCTAssertTrue(limits.split(separator: "\n").contains { $0.hasPrefix("Max open files") && $0.contains(" 64 ") },
                      "telwatch runs with 64 descriptors:\n\(limits)")

        let count = 100
        var paths: [String] = []
        for index in 0..<count { paths.append(try ring(String(format: "+1555%07d", index))) }
        let calls = incomingCalls(watch, count: count, timeout: 20)
        XCTAssertEqual(calls.count, count, "every call rings:\n\(watch.log())")
        XCTAssertTrue(holdsLock(try logind.inhibitors()), "logind lists the lock")
        let record = stateDirectory + "/" + RunStateStore.recordName
        XCTAssertTrue(Files.exists(record), "the run is recorded")

        for path in paths { try setState(path, .terminated, reason: .terminated) }
        var seen: [[String: Any]] = []
        XCTAssertEqual(nextEvent(watch, "run-stopped", timeout: 20, seen: &seen)?["reason"] as? String, "idle",
                       "the last call's end ends the run:\n\(watch.log())")
        XCTAssertEqual(seen.filter { $0["event"] as? String == "disconnected" }.count, count)
        // Emptied in the loop turn after the run's end (the record is written after a turn's events).
        XCTAssertTrue(Files.waitUntil(record, timeout: 5) { RunStateStore.read(directory: stateDirectory) == nil },
                      "the record is closed with the run")
        XCTAssertNotNil(lockListed(false, since: monotonicNow(), timeout: 5), "the lock is released")

        let lines = log.lines(2 * count, timeout: 60)
        XCTAssertEqual(lines.filter { $0.hasPrefix("incoming ") }.count, count, "every incoming hook ran")
        XCTAssertEqual(lines.filter { $0.hasPrefix("disconnected ") }.count, count, "every disconnected hook ran")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0))
        let errors = watch.log()
        XCTAssertFalse(errors.contains("Too many open files"), errors)
        XCTAssertFalse(errors.contains("hook "), "no hook failed or was dropped:\n\(errors)")
    }

    /// A read answered with an error whose text is hostile (escape sequences, BEL, newlines, a
    /// forged "telwatch: " line, 5 KB): stderr says so on one escaped, bounded line.
    func testAHostileErrorReplyIsEscapedAndCutOnOneLine() throws {
        try startModemManager()
        let watch = try startWatch()
        let call = try ring("+15550700", answering: .hostileError)
        var seen: [[String: Any]] = []
        // The warning is written before the events it causes: once the run is over, it is on stderr.
        XCTAssertEqual(nextEvent(watch, "run-stopped", timeout: 5, seen: &seen)?["reason"] as? String, "idle",
                       "the unreadable call lets the run go:\n\(watch.log())")
        XCTAssertFalse(seen.contains { $0["event"] as? String == "incoming" }, "\(seen)")

        let errors = watch.log()
        XCTAssertFalse(errors.contains("\u{1B}"), "no raw ESC")
        XCTAssertFalse(errors.contains("\u{07}"), "no raw BEL")
        XCTAssertFalse(errors.contains("\r"), "no raw carriage return")
        XCTAssertFalse(errors.contains("\u{202E}"), "no raw direction override")
        let lines = errors.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for line in lines {
            XCTAssertTrue(line.hasPrefix("telwatch: "), "a line not from telwatch: \(line.prefix(200))")
            XCTAssertFalse(line.hasPrefix("telwatch: forged"), "a forged line: \(line.prefix(200))")
            XCTAssertLessThanOrEqual(line.utf8.count, 1100, "a line of \(line.utf8.count) bytes")
        }
        let warning = try XCTUnwrap(lines.first { $0.contains("cannot read call \(call)") }, errors)
        XCTAssertTrue(warning.contains(#"modem exploded\e[2J"#), String(warning.prefix(200)))
        XCTAssertTrue(warning.contains(#"\ntelwatch: forged warning"#), "the forged line stays inside the warning")
        XCTAssertTrue(warning.hasSuffix("… (cut)"), "the 5 KB text is cut")
    }
}
