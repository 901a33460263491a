import CallMonitor
import DBus
import Foundation
import Glibc
import TestSupport
import XCTest

/// `telwatch watch` across a system sleep, as a subprocess on a private bus: dbusmock's own logind
/// announces the sleep and the resume (`PrepareForSleep` through its Mock interface), the
/// project's fakes play what happened meanwhile.
///
/// What "asleep" means here: a real suspend freezes telwatch, the telephony daemon and the bus
/// alike, so what a sleep loses are modem events nobody turned into signals; the calls' state is
/// only learned by reading it back after the resume. A SIGSTOP'd telwatch would receive every
/// queued signal on SIGCONT and prove nothing about that. So between `PrepareForSleep(true)` and
/// `(false)` the fakes drop all their signals (`LoseSignals`, Tests/Fixtures/dbusmock/README.md)
/// while their state changes as usual.
final class SleepCommandTests: CommandTestCase {
    static let mmCall = "org.freedesktop.ModemManager1.Call"

    // MARK: Helpers

    @discardableResult
    private func startOfono(parameters: String? = nil) throws -> TestProcess {
        let process = try fixture.startMock(template: "ofono", parameters: parameters)
        try fixture.waitForName("org.ofono")
        return process
    }

    private func ofonoControl(_ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        try logind.observer.callValues("org.ofono", "/", "org.freedesktop.DBus.Mock", member, arguments, timeout: 10)
    }

    /// The fake drops its signals from now on (`true`), or again sends them (`false`).
    private func loseSignals(_ lose: Bool, ofono: Bool = false) throws {
        let reply = ofono ? try ofonoControl("LoseSignals", [.bool(lose)]) : try control("LoseSignals", [.bool(lose)])
        if !lose { XCTAssertGreaterThan(reply.first?.uint32 ?? 0, 0, "the fake dropped what happened while asleep") }
    }

    /// `telwatch watch --json` waited for until ready; every line it wrote goes into `lines`
    /// (the calls live at start come before `ready`).
    private func startWatch(_ extra: [String] = [], backend: String = "modemmanager",
                            lines: inout [[String: Any]]) throws -> TestProcess {
        let process = try telwatch(["--bus", fixture.address, "--json", "--backend", backend,
                                    "--state-dir", stateDirectory] + extra)
        XCTAssertNotNil(nextEvent(process, "ready", timeout: 15, seen: &lines), "never ready:\n\(process.log())")
        return process
    }

    /// The first `name` line from `lines[start...]`, reading more lines (into `lines`) until it comes.
    @discardableResult
    private func find(_ watch: TestProcess, _ name: String, in lines: inout [[String: Any]], from start: Int = 0,
                      timeout: Double = 10) -> [String: Any]? {
        if let found = lines.dropFirst(start).first(where: { $0["event"] as? String == name }) { return found }
        return nextEvent(watch, name, timeout: timeout, seen: &lines)
    }

    /// Resumes, then reads until the resync after it has synced; returns the lines from the resume on.
    @discardableResult
    private func resume(_ watch: TestProcess, lines: inout [[String: Any]], file: StaticString = #filePath,
                        line: UInt = #line) throws -> ArraySlice<[String: Any]> {
        let start = lines.count
        try logind.prepareForSleep(false)
        let resumed = find(watch, "resume", in: &lines, from: start)
        XCTAssertNotNil(resumed, "no resume event:\n\(watch.log())", file: file, line: line)
        XCTAssertNotNil(resumed?["asleep_for"] as? Double, "\(resumed ?? [:])", file: file, line: line)
        let synced = find(watch, "backend", in: &lines, from: start)
        XCTAssertEqual(synced?["status"] as? String, "synced", "the resync", file: file, line: line)
        return lines[start...]
    }

    /// SIGTERM, then every line up to the end into `lines`.
    private func finish(_ watch: TestProcess, lines: inout [[String: Any]]) {
        watch.signal(SIGTERM)
        lines += watch.readToEnd(timeout: 15).split(separator: "\n").compactMap { JSONLine.object(String($0)) }
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    private func events(_ lines: some Collection<[String: Any]>, _ name: String) -> [[String: Any]] {
        lines.filter { $0["event"] as? String == name }
    }

    /// The events of the call with this number, in order.
    private func history(_ lines: [[String: Any]], _ number: String) -> [String] {
        lines.filter { $0["number"] as? String == number }.compactMap { $0["event"] as? String }
    }

    // MARK: Calls across a sleep

    func testModemManagerACallThatRangAndEndedWhileAsleepIsMissedAfterTheResume() throws {
        try startModemManager()
        var lines: [[String: Any]] = []
        let watch = try startWatch(lines: &lines)
        // A second telwatch beside the first: without the API, whose name the first one has.
        let text = try telwatch(["--bus", fixture.address, "--backend", "modemmanager", "--inhibit", "none",
                                 "--state-dir", stateDirectory + "-text", "--no-api"])
        XCTAssertNotNil(text.readLine(timeout: 15) { $0.contains("synced") }, text.log())

        try logind.prepareForSleep(true)
        let sleep = try XCTUnwrap(nextEvent(watch, "sleep"), watch.log())
        XCTAssertEqual(sleep["live_calls"] as? Int, 0)
        XCTAssertTrue(sleep["run_id"] is NSNull)
        try loseSignals(true)
        let call = try ring("+15559876")
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        try loseSignals(false)

        let seen = try resume(watch, lines: &lines)
        let ended = try XCTUnwrap(events(seen, "disconnected").first, "\(seen)")
        XCTAssertEqual(ended["path"] as? String, call)
        XCTAssertEqual(ended["number"] as? String, "+15559876")
        XCTAssertEqual(ended["previous"] as? String, "incoming")
        XCTAssertEqual(ended["direction"] as? String, "incoming")
        XCTAssertEqual(ended["reason"] as? String, "terminated")
        XCTAssertEqual(ended["resumed"] as? Bool, true)
        XCTAssertEqual(ended["missed"] as? Bool, true)
        XCTAssertEqual(ended["initial"] as? Bool, false)
        XCTAssertTrue(ended["duration"] is NSNull, "how long it rang is unknown")
        let missed = try XCTUnwrap(events(seen, "missed").first, "\(seen)")
        XCTAssertEqual(missed["call_id"] as? String, ended["call_id"] as? String)
        XCTAssertEqual(missed["resumed"] as? Bool, true)
        XCTAssertEqual(events(seen, "incoming").count, 0, "its ringing is over: no incoming event")
        XCTAssertEqual(events(seen, "run-started").count, 0, "a call that is over holds no run")
        XCTAssertEqual(seen.filter { ["disconnected", "missed"].contains($0["event"] as? String) }.count, 2)

        let line = try XCTUnwrap(text.readLine(timeout: 10) { $0.contains(" missed ") }, text.log())
        XCTAssertTrue(line.contains("+15559876"), line)
        XCTAssertTrue(line.contains("(while asleep, learned on resume)"), line)
    }

    func testModemManagerALiveCallIsNotRepeatedAndOneEndedWhileAsleepEndsOnceAndTheOverrideIsShown() throws {
        try startModemManager(parameters: Self.liveCalls([(.active, .incoming, number: "+15550001"),
                                                          (.active, .outgoing, number: "+15550002")]))
        var lines: [[String: Any]] = []
        let watch = try startWatch(lines: &lines)
        XCTAssertNotNil(find(watch, "lock-taken", in: &lines), watch.log())

        try logind.prepareForSleep(true)
        let overridden = try XCTUnwrap(find(watch, "sleep-overridden", in: &lines), watch.log())
        XCTAssertEqual(overridden["lock"] as? String, "held", "logind went to sleep despite the block lock")
        XCTAssertEqual(overridden["inhibit"] as? String, "sleep:block")
        XCTAssertEqual(overridden["holders"] as? Int, 2)
        XCTAssertTrue(watch.log().contains("the system went to sleep with 2 calls live"), watch.log())
        try loseSignals(true)
        try control("RemoteHangup", [.objectPath("/org/freedesktop/ModemManager1/Call/0")])
        try loseSignals(false)
        try resume(watch, lines: &lines)

        // status and doctor show the sleep, and that it overrode a live call's lock.
        let status = try runToEnd(["status", "--json", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory])
        let object = try XCTUnwrap(JSONLine.object(status.output.trimmingCharacters(in: .whitespacesAndNewlines)), status.output)
        let sleep = try XCTUnwrap(object["sleep"] as? [String: Any], status.output)
        XCTAssertEqual(sleep["overridden"] as? Bool, true)
        XCTAssertEqual(sleep["overrides"] as? Int, 1)
        XCTAssertEqual(sleep["asleep"] as? Bool, false)
        XCTAssertEqual(sleep["last_override_lock"] as? String, "held")
        XCTAssertNotNil(sleep["slept_at"] as? String)
        XCTAssertNotNil(sleep["resumed_at"] as? String)
        let statusText = try runToEnd(["status", "--bus", fixture.address, "--backend", "modemmanager",
                                       "--state-dir", stateDirectory])
        XCTAssertTrue(statusText.output.contains("sleep: last "), statusText.output)
        XCTAssertTrue(statusText.output.contains("a call was live (the lock was overridden)"), statusText.output)
        let doctor = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory])
        XCTAssertEqual(doctor.status, .exited(4), doctor.output)
        XCTAssertTrue(doctor.output.contains("✘ sleep: last "), doctor.output)
        XCTAssertTrue(doctor.output.contains("LidSwitchIgnoreInhibited"), doctor.output)

        finish(watch, lines: &lines)
        XCTAssertEqual(history(lines, "+15550002"), ["connected"], "live across the sleep: told once")
        XCTAssertEqual(history(lines, "+15550001"), ["connected", "disconnected"])
        let ended = try XCTUnwrap(events(lines, "disconnected").first)
        XCTAssertEqual(ended["resumed"] as? Bool, true)
        XCTAssertEqual(ended["missed"] as? Bool, false)
        XCTAssertEqual(ended["previous"] as? String, "connected")
        XCTAssertEqual(events(lines, "run-started").count, 1, "the run went on across the sleep")
        XCTAssertEqual(events(lines, "run-stopped").map { $0["reason"] as? String }, ["shutdown"])
    }

    func testOfonoALiveCallIsNotRepeatedAndOneGoneWhileAsleepEndsOnce() throws {
        try startOfono(parameters: """
            {"calls": [{"state": "active", "number": "+15550001"}, {"state": "active", "number": "+15550002"}]}
            """)
        var lines: [[String: Any]] = []
        let watch = try startWatch(backend: "ofono", lines: &lines)
        XCTAssertNotNil(find(watch, "run-started", in: &lines), watch.log())
        try logind.prepareForSleep(true)
        XCTAssertNotNil(find(watch, "sleep-overridden", in: &lines))
        try loseSignals(true, ofono: true)
        _ = try ofonoControl("RemoteHangup", [.objectPath("/phonesim/voicecall02"), .string("remote")])
        try loseSignals(false, ofono: true)
        try resume(watch, lines: &lines)
        finish(watch, lines: &lines)

        XCTAssertEqual(history(lines, "+15550001"), ["connected"], "live across the sleep: told once")
        XCTAssertEqual(history(lines, "+15550002"), ["connected", "disconnected"])
        let ended = try XCTUnwrap(events(lines, "disconnected").first)
        XCTAssertEqual(ended["resumed"] as? Bool, true)
        XCTAssertEqual(ended["reason"] as? String, "removed", "its DisconnectReason was lost with the sleep")
        XCTAssertEqual(events(lines, "run-started").count, 1, "the run went on across the sleep")
    }

    // MARK: Locks

    func testTheGraceLockIsHeldAfterTheResumeAndGoneAfterItsTime() throws {
        try startModemManager()
        var lines: [[String: Any]] = []
        let watch = try startWatch(["--resume-grace", "1s"], lines: &lines)
        XCTAssertEqual(try logind.inhibitors().filter { $0.who == "telwatch" }, [], "nothing held while idle")
        try logind.prepareForSleep(true)
        XCTAssertNotNil(find(watch, "sleep", in: &lines))
        try resume(watch, lines: &lines)
        let taken = try XCTUnwrap(find(watch, "grace-lock-taken", in: &lines), watch.log())
        XCTAssertEqual(taken["seconds"] as? Double, 1)
        let held = logind.waitForInhibitors { $0.contains { $0.who == "telwatch" } }
        XCTAssertEqual(held?.filter { $0.who == "telwatch" }.map { "\($0.what)/\($0.mode)" }, ["sleep/block"])
        let released = try XCTUnwrap(find(watch, "grace-lock-released", in: &lines, timeout: 5), watch.log())
        XCTAssertEqual(released["expired"] as? Bool, true)
        XCTAssertNotNil(logind.waitForInhibitors { !$0.contains { $0.who == "telwatch" } }, "gone after its time")
    }

    func testTheDelayLockGoesForTheSleepAndASpoofedPrepareForSleepIsIgnored() throws {
        try startModemManager()
        var lines: [[String: Any]] = []
        let watch = try startWatch(["--sleep-delay-lock"], lines: &lines)
        XCTAssertNotNil(find(watch, "delay-lock-taken", in: &lines), watch.log())
        XCTAssertEqual(logind.waitForInhibitors { $0.contains { $0.who == "telwatch" } }?
                        .filter { $0.who == "telwatch" }.map { "\($0.what)/\($0.mode)" }, ["sleep/delay"])

        // Anyone may broadcast PrepareForSleep; only logind's own is believed.
        try logind.spoofPrepareForSleep(true)
        try logind.spoofPrepareForSleep(false)

        try logind.prepareForSleep(true)
        XCTAssertNotNil(find(watch, "sleep", in: &lines))
        XCTAssertNotNil(find(watch, "delay-lock-released", in: &lines))
        XCTAssertNotNil(logind.waitForInhibitors { !$0.contains { $0.who == "telwatch" } },
                        "released as soon as the sleep was announced")
        let resumedAt = lines.count
        try resume(watch, lines: &lines)
        XCTAssertNotNil(find(watch, "delay-lock-taken", in: &lines, from: resumedAt), "taken again after the resume")
        XCTAssertNotNil(logind.waitForInhibitors { $0.contains { $0.who == "telwatch" && $0.mode == "delay" } })
        finish(watch, lines: &lines)
        XCTAssertEqual(events(lines, "sleep").count, 1, "the spoofs changed nothing")
        XCTAssertEqual(events(lines, "resume").count, 1, "the spoofs changed nothing")
    }
}
