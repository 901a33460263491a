import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// What an administrator met with the package installed on a booted system: a call that
/// survives a telwatch crash, a modem that comes after the start, a stack that stops with no call.
final class InstalledServiceTests: CommandTestCase {
    /// `telwatch log --json` of the test's state directory, each line parsed.
    private func loggedCalls() throws -> [[String: Any]] {
        let result = try runToEnd(["log", "--json", "--state-dir", stateDirectory])
        XCTAssertEqual(result.status, .exited(0), result.errors)
        return try result.output.split(separator: "\n").map { try XCTUnwrap(JSONLine.object(String($0)), String($0)) }
    }

    /// Returns once the daemon has written what its earlier turns changed: a SIGUSR1 is read only
    /// after the loop's wait, before which the history commits.
    private func written(_ watch: TestProcess) {
        watch.signal(SIGUSR1)
        XCTAssertNotNil(nextEvent(watch, "stats"), "no stats line")
    }

    func testACallThatSurvivesASIGKILLOfTelwatchIsOneHistoryRowWithItsRealAnswer() throws {
        try startModemManager()
        let first = try startWatch()
        let call = try ring("+15557001")
        let incoming = try XCTUnwrap(nextEvent(first, "incoming"))
        try mm(call, "org.freedesktop.ModemManager1.Call", "Accept")
        let connected = try XCTUnwrap(nextEvent(first, "connected"))
        written(first)
        first.signal(SIGKILL)
        XCTAssertNotNil(first.wait(timeout: 10))

        let second = try startWatch()
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        XCTAssertNotNil(nextEvent(second, "disconnected"), second.log())
        written(second)
        let rows = try loggedCalls()
        XCTAssertEqual(rows.count, 1, "one call, one row: \(rows)")
        let row = try XCTUnwrap(rows.first)
        XCTAssertEqual(row["call_id"] as? String, incoming["call_id"] as? String)
        XCTAssertEqual(row["state"] as? String, "disconnected")
        XCTAssertEqual(row["connected_at"] as? String, connected["connected_at"] as? String,
                       "answered when it was, not when telwatch came back")
        XCTAssertEqual(row["initial"] as? Bool, false)
        XCTAssertFalse(second.log().contains("closed as unknown"), second.log())

        // And once more with a clean restart in the middle of a second call.
        let next = try ring("+15557002")
        let ringing = try XCTUnwrap(nextEvent(second, "incoming"))
        second.signal(SIGTERM)
        XCTAssertEqual(second.wait(timeout: 10), .exited(0))
        let third = try startWatch()
        try control("RemoteHangup", [.objectPath(try ObjectPath(next))])
        XCTAssertNotNil(nextEvent(third, "missed"), third.log())
        written(third)
        let after = try loggedCalls()
        XCTAssertEqual(after.count, 2, "\(after)")
        let missed = try XCTUnwrap(after.first { $0["number"] as? String == "+15557002" })
        XCTAssertEqual(missed["call_id"] as? String, ringing["call_id"] as? String)
        XCTAssertEqual(missed["missed"] as? Bool, true)
        XCTAssertEqual(missed["first_seen"] as? String, ringing["first_seen"] as? String)
        third.signal(SIGTERM)
        XCTAssertEqual(third.wait(timeout: 10), .exited(0))
    }

    private func statusBackends() throws -> [String: String] {
        let result = try runToEnd(["status", "--json", "--bus", fixture.address, "--backend", "modemmanager"])
        XCTAssertEqual(result.status, .exited(0), result.errors)
        let object = try XCTUnwrap(JSONLine.object(result.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertNotNil(object["service"] as? [String: Any], "the service answered: \(result.output)")
        return try XCTUnwrap(object["backends"] as? [String: String])
    }

    func testAModemThatAppearsAfterTheStartIsCountedAndOneThatGoesIsNot() throws {
        try startModemManager(parameters: #"{"modems": 0}"#)
        let watch = try startWatch()
        XCTAssertEqual(try statusBackends()["modemmanager"], "0 voice modems")
        // The control call returns once InterfacesAdded is on the bus, which delivers it to the
        // service before the status's question.
        let modem = try XCTUnwrap(control("AddModem", [.string("late")]).first?.objectPath)
        XCTAssertEqual(try statusBackends()["modemmanager"], "1 voice modem")
        let call = try control("Ring", [.objectPath(modem), .string("+15557003")]).first?.objectPath
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertNotNil(call)
        try control("RemoveModem", [.objectPath(modem)])
        XCTAssertNotNil(nextEvent(watch, "disconnected"))
        XCTAssertEqual(try statusBackends()["modemmanager"], "0 voice modems")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    /// The text stream's line for a stack that stops, read until it comes.
    private func stoppedLine(_ watch: TestProcess) -> String? {
        watch.readLine(timeout: 10, where: { $0.contains("modemmanager") && $0.contains("stopped") })
    }

    func testAStackThatStopsSaysCallsEndedOnlyWhenSomeWereLive() throws {
        var mock = try startModemManager()
        let watch = try telwatch(["--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory])
        XCTAssertNotNil(watch.readLine(timeout: 15, where: { $0.contains("synced") }), watch.log())
        mock.signal(SIGTERM)
        XCTAssertNotNil(mock.wait(timeout: 10))
        let idle = try XCTUnwrap(stoppedLine(watch), watch.log())
        XCTAssertFalse(idle.contains("calls ended"), "no call was live: \(idle)")

        mock = try startModemManager()
        XCTAssertNotNil(watch.readLine(timeout: 15, where: { $0.contains("synced") }), watch.log())
        _ = try ring("+15557004")
        XCTAssertNotNil(watch.readLine(timeout: 10, where: { $0.contains("incoming") }), watch.log())
        mock.signal(SIGTERM)
        XCTAssertNotNil(mock.wait(timeout: 10))
        let busy = try XCTUnwrap(stoppedLine(watch), watch.log())
        XCTAssertTrue(busy.contains("its live calls ended (backend-lost)"), busy)
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }
}
