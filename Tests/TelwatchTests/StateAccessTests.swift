import Glibc
import Loop
import TestSupport
import XCTest

/// Whose state `log`, `doctor` and `status` read, and what they say to a user who may not read it
/// or ask the service: the running service's directory when none is asked for, "permission
/// denied" rather than "does not exist", and one line on who may ask instead of a bus error.
final class StateAccessTests: CommandTestCase {
    private static let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    private func needsRoot() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root: the other user is started with setpriv --reuid") }
    }

    func testLogAndDoctorReadTheRunningServicesHistoryAndSaySo() throws {
        try startModemManager()
        let watch = try startWatch()
        let call = try ring("+15557101")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        try control("RemoteHangup", [.objectPath(try .init(call))])
        XCTAssertNotNil(nextEvent(watch, "missed"))
        watch.signal(SIGUSR1)
        XCTAssertNotNil(nextEvent(watch, "stats"), "the turn's rows are written before the loop waits")

        // No --state-dir: the service on the (test's) system bus tells where its history is.
        let log = try runToEnd(["log", "--json"])
        XCTAssertEqual(log.status, .exited(0), log.errors)
        XCTAssertEqual(log.output.split(separator: "\n").count, 1, log.output)
        XCTAssertTrue(log.output.contains("+15557101"), log.output)
        XCTAssertTrue(log.errors.contains("state directory \(stateDirectory) (the running service's (pid \(watch.pid)))"),
                      "which directory, said once: \(log.errors)")

        let doctor = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager"])
        XCTAssertTrue(doctor.output.contains("state directory \(stateDirectory): the running service's"), doctor.output)
        XCTAssertTrue(doctor.output.contains("call history \(stateDirectory)/history.db: 1 call"), doctor.output)

        // Asked for, a directory is used as it is, without a word.
        let asked = try runToEnd(["log", "--state-dir", stateDirectory])
        XCTAssertFalse(asked.errors.contains("state directory"), asked.errors)
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    func testOutsideTheGroupLogSaysPermissionDeniedAndHowToJoin() throws {
        try needsRoot()
        let scratch = try ScratchDirectory(prefix: "telwatch-access")
        defer { scratch.remove() }
        XCTAssertEqual(chmod(scratch.path, 0o755), 0)
        let directory = scratch.path + "/state"
        XCTAssertEqual(mkdir(directory, 0o750), 0)
        XCTAssertEqual(chown(directory, 0, 0), 0)
        try Files.write(directory + "/history.db", "", mode: 0o640)
        let process = try fixture.start(Self.nobody + [Self.telwatch, "log", "--state-dir", directory], name: "log-nobody")
        let output = process.readToEnd(timeout: 20)
        XCTAssertEqual(process.wait(timeout: 5), .exited(1), process.log())
        XCTAssertEqual(output, "")
        let errors = process.log()
        XCTAssertTrue(errors.contains("permission denied"), errors)
        XCTAssertFalse(errors.contains("does not exist"), errors)
        XCTAssertTrue(errors.contains("join the root group: sudo adduser nobody root, then log in again"), errors)
    }

    func testAMemberOfTheServicesGroupMayMarkCallsSeenWhileItRuns() throws {
        try needsRoot()
        let scratch = try ScratchDirectory(prefix: "telwatch-markseen")
        defer { scratch.remove() }
        XCTAssertEqual(chmod(scratch.path, 0o755), 0)
        // As packaged: the service's directory, 0750, its group the one members join.
        let directory = scratch.path + "/state"
        XCTAssertEqual(mkdir(directory, 0o750), 0)
        XCTAssertEqual(chown(directory, 0, 65534), 0)
        // The service runs in its group (Group=telwatch), so its files are that group's; this
        // telwatch runs as root, and the directory's set-group-id bit gives its files the group.
        XCTAssertEqual(chmod(directory, 0o2750), 0)
        try startModemManager()
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager", "--state-dir", directory])
        XCTAssertNotNil(nextEvent(watch, "ready", timeout: 15), watch.log())
        let call = try ring("+15557102")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        try control("RemoteHangup", [.objectPath(try .init(call))])
        XCTAssertNotNil(nextEvent(watch, "missed"))
        watch.signal(SIGUSR1)
        XCTAssertNotNil(nextEvent(watch, "stats"))

        // nobody's group is the directory's (65534): a member, not the owner.
        let member = try fixture.start(Self.nobody + [Self.telwatch, "log", "--state-dir", directory, "--mark-seen"],
                                       name: "mark-seen-member")
        let output = member.readToEnd(timeout: 20)
        XCTAssertEqual(member.wait(timeout: 5), .exited(0), member.log())
        XCTAssertTrue(output.contains("+15557102"), output)
        XCTAssertTrue(member.log().contains("marked 1 missed call seen"), member.log())
        let unseen = try runToEnd(["log", "--state-dir", directory, "--unseen"])
        XCTAssertEqual(unseen.output.trimmingCharacters(in: .whitespacesAndNewlines), "no calls match", unseen.output)
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    func testOutsideTheGroupStatusAndEventsSayInOneLineWhoMayAsk() throws {
        try needsRoot()
        let bus = try BusFixture(config: Repository.path("Tests/Fixtures/bus-api-policy.conf"), openToOtherUsers: true)
        defer { bus.stop() }
        let watch = try bus.start([Self.telwatch, "--bus", bus.address, "--json", "--backend", "ofono",
                                   "--inhibit", "none", "--state-dir", bus.directory + "/state"])
        XCTAssertNotNil(watch.readLine(timeout: 15, where: { $0.contains("\"event\":\"ready\"") }), watch.log())
        for command in ["status", "events"] {
            let result = try bus.run(Self.nobody + [Self.telwatch, command, "--bus", bus.address], timeout: 20)
            XCTAssertEqual(result.status, .exited(1), "\(command): \(result.log)")
            let lines = result.log.split(separator: "\n").filter { !$0.isEmpty }
            XCTAssertEqual(lines.count, 1, "\(command): one line, not a bus dump: \(result.log)")
            XCTAssertFalse(result.log.contains("Rejected send message"), result.log)
            XCTAssertTrue(result.log.contains("only root, members of the telwatch group and the user at the console "
                                              + "may ask it"), result.log)
            XCTAssertTrue(result.log.contains("sudo adduser nobody telwatch, then log in again"), result.log)
        }
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }
}
