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
}
