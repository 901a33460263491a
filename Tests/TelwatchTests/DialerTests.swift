import Glibc
import TestSupport
import XCTest

/// telwatch beside the phone's dialer (docs/phones.md): with `org.gnome.Calls` on the session bus
/// telwatch's own ring and missed-call notification stand aside, and a call screening holds quiet
/// is silenced in the dialer through its own `Silence`. The dialer here is the project's
/// GNOME Calls mock (Tests/Fixtures/dbusmock/gnome_calls.py) beside the real feedbackd; the real
/// GNOME Calls runs in the test command's dialer tier (scripts/test-dialer).
final class DialerTests: PhoneActionTestCase {
    private var rulesPath: String { logind.directory + "/screening.conf" }

    private func startDialer() throws {
        _ = try session.startMock(template: "gnome_calls")
        try session.waitForName("org.gnome.Calls")
    }

    /// The dialer sees the call as GNOME Calls does, from the same stack: an inbound call object.
    private func dialerSees(_ number: String) throws -> String {
        let result = try session.run(["gdbus", "call", "--address", session.address, "--dest", "org.gnome.Calls",
                                      "--object-path", "/org/gnome/Calls", "--method",
                                      "org.freedesktop.DBus.Mock.AddIncomingCall", number])
        XCTAssertEqual(result.status, .exited(0), result.log)
        guard let path = result.output.split(separator: "'").dropFirst().first else {
            throw FixtureError("AddIncomingCall answered \(result.output)")
        }
        return String(path)
    }

    func testBesideGNOMECallsTelwatchNeitherRingsNorNotifiesAndSilencesTheDialer() throws {
        try "block silence +1555999*\n".write(toFile: rulesPath, atomically: true, encoding: .utf8)
        try startFeedbackd()
        try startDialer()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback", "--notify", "--screening", rulesPath])
        // An allowed call rings and is missed: the dialer rings and notifies it, telwatch does not.
        let (allowed, _) = try ringSeen("+15551230001")
        XCTAssertNotNil(nextEvent(telwatch, "incoming"))
        try setStateSeen(allowed, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "missed"))
        // A silenced call: the dialer is told to be quiet. telwatch's session messages go out in
        // order, so whatever it sent for the first call is on the bus before this.
        let path = try dialerSees("+15559990001")
        _ = try ringSeen("+15559990001")
        XCTAssertNotNil(nextEvent(telwatch, "screened"))
        let silence = sessionTraffic.waitFor(from: 0) {
            $0.kind == "method call" && $0.member == "Silence" && $0.fields["path"] == path
        }
        XCTAssertNotNil(silence, "telwatch did not silence GNOME Calls' ring: \(telwatch.log())")
        let before = sessionTraffic.messages.prefix { $0.time <= (silence?.time ?? .infinity) }
        XCTAssertFalse(before.contains { $0.member == "TriggerFeedback" }, "telwatch rang beside GNOME Calls")
        XCTAssertFalse(before.contains { $0.member == "Notify" }, "telwatch notified beside GNOME Calls")
    }

    /// A call the dialer lists only after telwatch decided (GNOME Calls reads a new call ~20 ms
    /// after the stack announced it) is silenced when it appears.
    func testACallTheDialerListsAfterTheDecisionIsSilencedWhenItAppears() throws {
        try "block ignore +1555999*\n".write(toFile: rulesPath, atomically: true, encoding: .utf8)
        try startDialer()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback", "--screening", rulesPath])
        _ = try ringSeen("+15559990002")
        XCTAssertNotNil(nextEvent(telwatch, "screened"))
        let path = try dialerSees("+15559990002")
        XCTAssertNotNil(sessionTraffic.waitFor(from: 0) {
            $0.kind == "method call" && $0.member == "Silence" && $0.fields["path"] == path
        }, telwatch.log())
    }

    func testDoctorNamesTheDialer() throws {
        try startModemManager()
        let arguments = ["doctor", "--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory,
                         "--feedback", "--session-bus", session.address]
        let alone = try runToEnd(arguments)
        XCTAssertTrue(alone.output.contains("dialer: none on the session bus (org.gnome.Calls)"), alone.output)
        try startDialer()
        let beside = try runToEnd(arguments)
        XCTAssertTrue(beside.output.contains("dialer: GNOME Calls (org.gnome.Calls) runs as :1."), beside.output)
        XCTAssertTrue(beside.output.contains("a rejected call still leaves GNOME Calls' \"Missed call\" notification"),
                      beside.output)
        // GNOME Calls 48 can start its ring before it handles telwatch's Silence (docs/phones.md).
        XCTAssertTrue(beside.output.contains("GNOME Calls 48 may still ring one for a few tens of milliseconds"),
                      beside.output)
    }
}
