import CallMonitor
import Glibc
import Loop
import TestSupport
import XCTest

/// The phone actions' session bus is not the stacks' bus: losing it, or never having it, costs
/// the actions and one line, never the calls, the run or telwatch.
final class SessionBusTests: PhoneActionTestCase {
    func testAnUnreachableSessionBusTurnsTheActionsOffWithOneLine() throws {
        try startModemManager()
        let telwatch = try startWatch(["--feedback", "--notify", "--session-bus", "unix:path=" + session.directory + "/none"])
        let (call, _) = try ringSeen("+15551230001")
        XCTAssertNotNil(nextEvent(telwatch, "incoming"))
        try setStateSeen(call, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
        let lines = telwatch.log().split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.hasPrefix("telwatch: phone actions: off: cannot connect to the bus: ") ?? false, "\(lines)")
    }

    func testLosingTheSessionBusKeepsTelwatchFollowingCalls() throws {
        try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        session.stop()
        XCTAssertTrue(Files.waitUntil(telwatch.logPath ?? "", timeout: 10) { telwatch.log().contains("lost the session bus") },
                      telwatch.log())
        let (call, _) = try ringSeen("+15551230001")
        XCTAssertNotNil(nextEvent(telwatch, "incoming"), "telwatch stopped following calls")
        try setStateSeen(call, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
        XCTAssertTrue(telwatch.isRunning)
    }

    /// `doctor` with phone actions on says, for each, whether its service is on the session bus.
    func testDoctorSaysWhichActionsServicesAreThere() throws {
        try startFeedbackd()
        try startModemManager()
        let result = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory, "--feedback", "--notify",
                                   "--session-bus", session.address])
        XCTAssertEqual(result.status, .exited(4), result.output)
        XCTAssertTrue(result.output.contains("✔ --feedback: feedbackd (org.sigxcpu.Feedback) runs as :1."), result.output)
        XCTAssertTrue(result.output.contains("✘ --notify: a notification server (org.freedesktop.Notifications) "
                                             + "is not on the session bus"), result.output)
        XCTAssertFalse(result.output.contains("--call-audio"), "only the actions asked for: \(result.output)")
    }

    /// With no --session-bus, the actions use DBUS_SESSION_BUS_ADDRESS (here the test's one bus,
    /// which the tests' environment names as both the system and the session bus).
    func testTheSessionBusDefaultsToDbusSessionBusAddress() throws {
        try fixture.startFeedbackd()
        try startModemManager()
        let telwatch = try startWatch(["--feedback"])
        let traffic = try BusMonitor(fixture)
        _ = try ring("+15551230001")
        let trigger = traffic.waitFor(isCall("TriggerFeedback", #"string "phone-incoming-call""#))
        XCTAssertEqual(trigger.flatMap { traffic.reply(to: $0) }?.kind, "method return", telwatch.log())
    }
}
