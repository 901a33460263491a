import Foundation
import Glibc
import Loop
import Processes
import TestSupport
import XCTest

/// `status` and `doctor` say what is true for the user who asks: a record they may not read is
/// not "no run", a run whose telwatch was killed is not held, and doctor checks as the account
/// the service runs as.
final class StatusDoctorTruthTests: CommandTestCase {
    static let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]

    /// `telwatch ARGS` started with `prefix` (setpriv as another user), run to its end.
    func runAs(_ arguments: [String], prefix: [String]) throws -> (status: ChildExit?, output: String, errors: String) {
        let process = try fixture.start(prefix + [Self.telwatch] + arguments, name: "telwatch")
        let output = process.readToEnd(timeout: 20)
        return (process.wait(timeout: 5), output, process.log())
    }

    var status: [String] { ["status", "--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory] }

    /// A watch with no API (so status reads the record) holding a run for a call live at start.
    func watchHoldingARun() throws -> TestProcess {
        try startModemManager(parameters: Self.liveCalls([(.active, .incoming, number: "+15553131")]))
        let watch = try startWatch(["--no-api"])
        XCTAssertNotNil(nextEvent(watch, "lock-taken"), "the call live at start holds a run")
        return watch
    }

    func testStatusAsANonMemberSaysItCannotReadTheStateDirectory() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root: status is run as nobody with setpriv --reuid") }
        _ = try watchHoldingARun()
        chmod(fixture.directory, 0o711)
        var info = stat()
        XCTAssertEqual(stat(stateDirectory, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o750, "the state directory is open to its group")
        XCTAssertEqual(stat(stateDirectory + "/current-run", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o640, "the run record is readable by the group")

        let outsider = try runAs(status, prefix: Self.nobody)
        XCTAssertEqual(outsider.status, .exited(0), outsider.errors)
        XCTAssertTrue(outsider.output.contains("run: unknown: cannot read the state directory (\(stateDirectory)): "
                                               + "run as root or as a member of the root group"), outsider.output)
        XCTAssertFalse(outsider.output.contains("run: none"), outsider.output)
        let json = try runAs(status + ["--json"], prefix: Self.nobody)
        let object = try XCTUnwrap(JSONLine.object(json.output.trimmingCharacters(in: .whitespacesAndNewlines)), json.output)
        XCTAssertEqual((object["run_unreadable"] as? [String: Any])?["group"] as? String, "root", json.output)

        // A member of the directory's group reads the run.
        let member = try runAs(status, prefix: ["setpriv", "--reuid=65534", "--regid=65534", "--groups=0", "--"])
        XCTAssertTrue(member.output.contains("run: held for"), member.output + member.errors)
    }

    /// Something in the run record's place that is no record (here a directory) is not "no run".
    func testStatusSaysARunRecordItCannotUseInsteadOfNone() throws {
        try Files.makeDirectory(stateDirectory)
        try Files.makeDirectory(stateDirectory + "/current-run")
        let text = try runToEnd(status)
        XCTAssertTrue(text.output.contains("run: unknown: the run record (\(stateDirectory)/current-run) cannot be used: "
                                           + "not a regular file; the next telwatch to start removes it, or says why it "
                                           + "cannot"), text.output + text.errors)
        XCTAssertFalse(text.output.contains("run: none"), text.output)
        let json = try runToEnd(status + ["--json"])
        let object = try XCTUnwrap(JSONLine.object(json.output.trimmingCharacters(in: .whitespacesAndNewlines)), json.output)
        XCTAssertEqual((object["run_unusable"] as? [String: Any])?["reason"] as? String, "not a regular file", json.output)
    }

    func testStatusAfterTheDaemonWasKilledSaysItIsGoneAndWhatTheLastRunWas() throws {
        let watch = try watchHoldingARun()
        let held = try runToEnd(status)
        XCTAssertTrue(held.output.contains("run: held for"), held.output)

        watch.signal(SIGKILL)
        XCTAssertEqual(watch.wait(timeout: 10), .signaled(SIGKILL))
        let text = try runToEnd(status)
        XCTAssertEqual(text.status, .exited(0), text.errors)
        XCTAssertFalse(text.output.contains("run: held"), text.output)
        XCTAssertTrue(text.output.contains("run: none: the last run ("), text.output)
        XCTAssertTrue(text.output.contains("was held by telwatch pid \(watch.pid) from "), text.output)
        XCTAssertTrue(text.output.contains("that telwatch is gone"), text.output)

        let json = try runToEnd(status + ["--json"])
        let object = try XCTUnwrap(JSONLine.object(json.output.trimmingCharacters(in: .whitespacesAndNewlines)), json.output)
        XCTAssertTrue(object["run"] is NSNull, json.output)
        let last = try XCTUnwrap(object["last_run"] as? [String: Any], json.output)
        XCTAssertEqual(last["pid"] as? Int, Int(watch.pid))
        XCTAssertEqual(last["holder_running"] as? Bool, false)
    }

    func testDoctorAsAnotherUserChecksAsThatAccount() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root: doctor --user drops to another account") }
        try startModemManager()
        chmod(fixture.directory, 0o711)
        XCTAssertEqual(mkdir(stateDirectory, 0o700), 0)
        let doctor = ["doctor", "--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory]

        let asRoot = try runToEnd(doctor)
        XCTAssertTrue(asRoot.output.contains("✔ state directory \(stateDirectory) is writable"), asRoot.output)

        let asNobody = try runToEnd(doctor + ["--user", "nobody"])
        XCTAssertEqual(asNobody.status, .exited(4), asNobody.output + asNobody.errors)
        XCTAssertTrue(asNobody.output.hasPrefix("checking as nobody (uid 65534, gid 65534"), asNobody.output)
        XCTAssertTrue(asNobody.output.contains("✘ state directory \(stateDirectory) is writable"), asNobody.output)

        let notRoot = try runAs(doctor + ["--user", "root"], prefix: Self.nobody)
        XCTAssertEqual(notRoot.status, .exited(2))
        XCTAssertTrue(notRoot.errors.contains("doctor --user root needs root"), notRoot.errors)
        let unknown = try runToEnd(doctor + ["--user", "no-such-user-here"])
        XCTAssertEqual(unknown.status, .exited(2))
        XCTAssertTrue(unknown.errors.contains("no user 'no-such-user-here'"), unknown.errors)
    }

    func testDoctorTakesTheShippedHooksAsTheHookRunnerDoes() throws {
        try startModemManager()
        let base = ["doctor", "--bus", fixture.address, "--state-dir", stateDirectory]
        let shipped = try runToEnd(base + ["--backend", "modemmanager", "--hooks", Repository.path("dist/hooks")])
        XCTAssertEqual(shipped.status, .exited(0), shipped.output)
        XCTAssertTrue(shipped.output.contains("✔ hooks in \(Repository.path("dist/hooks")): connected, disconnected, missed\n"),
                      shipped.output)
        XCTAssertTrue(shipped.output.contains("not hooks (named after no event; telwatch never runs them): README.md"),
                      shipped.output)

        let hooks = logind.directory + "/hooks"
        try Files.makeDirectory(hooks)
        try Files.makeDirectory(hooks + "/missed.d")
        try Files.write(hooks + "/incoming", "#!/bin/sh\n", mode: 0o644)
        try Files.script(hooks + "/missed.d/10-log", "true")
        let mine = try runToEnd(base + ["--backend", "modemmanager", "--hooks", hooks])
        XCTAssertEqual(mine.status, .exited(4), mine.output)
        XCTAssertTrue(mine.output.contains("✘ hooks in \(hooks): missed.d/10-log; not executable, so never run: incoming"),
                      mine.output)

        XCTAssertTrue(mine.output.contains("    fix: chmod +x incoming (those that should run)"), mine.output)

        // What chmod +x cannot mend is said as what it is, with its own fix.
        let odd = logind.directory + "/odd-hooks"
        try Files.makeDirectory(odd)
        try Files.makeDirectory(odd + "/connected")
        XCTAssertEqual(mkfifo(odd + "/disconnected", 0o755), 0)
        XCTAssertEqual(symlink(odd + "/no-such-program", odd + "/missed"), 0)
        try Files.write(odd + "/incoming", "#!/no/such/interpreter\nexit 0\n", mode: 0o755)
        try Files.script(odd + "/updated", "true")
        let found = try runToEnd(base + ["--backend", "modemmanager", "--hooks", odd])
        XCTAssertEqual(found.status, .exited(4), found.output)
        XCTAssertTrue(found.output.contains("✘ hooks in \(odd): updated; a directory, not a file, so never run: connected; "
                                            + "a FIFO, not a file, so never run: disconnected; a link to nothing, so never run: "
                                            + "missed; its #! interpreter /no/such/interpreter is missing, so every run fails: "
                                            + "incoming\n"), found.output)
        XCTAssertTrue(found.output.contains("fix: put an executable file in place of connected (hooks are regular files); "
                                            + "put an executable file in place of disconnected"), found.output)
        XCTAssertTrue(found.output.contains("point missed at an existing program, or remove them; install /no/such/interpreter, "
                                            + "or fix the #! line of incoming"), found.output)
        XCTAssertFalse(found.output.contains("chmod +x"), found.output)

        // A stack that is not running: a problem when it is the one asked for, and never a ✔.
        let ofono = try runToEnd(base + ["--backend", "ofono"])
        XCTAssertEqual(ofono.status, .exited(4), ofono.output)
        XCTAssertTrue(ofono.output.contains("✘ oFono is not running"), ofono.output)
        let auto = try runToEnd(base)
        XCTAssertEqual(auto.status, .exited(0), auto.output)
        XCTAssertFalse(auto.output.contains("✔ oFono"), auto.output)
        XCTAssertTrue(auto.output.contains("  oFono is not running"), auto.output)
    }
}
