import CallMonitor
import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// Stopping a ring from outside: the D-Bus API's `Silence(call_id)` (docs/dbus-api.md), with
/// Debian's real feedbackd on a private session bus; and feedbackd's own `silent` profile, which
/// telwatch's ring follows without knowing (docs/screening.md, "feedbackd's profiles").
final class SilenceTests: PhoneActionTestCase {
    let incoming = #"string "phone-incoming-call""#
    let missedCall = #"string "phone-missed-call""#
    static let api = "io.telwatch.Monitor1"

    private func silence(_ id: String) throws {
        try logind.observer.callValues(Self.api, "/io/telwatch/Monitor1", Self.api, "Silence", [.string(id)], timeout: 10)
    }

    private func errorName(_ error: Error) -> String? {
        if case .remote(let name, _)? = error as? DBusError { return name }
        return nil
    }

    /// `Silence` ends the ring at once; the call says so (`screened … silence rule=user`, the
    /// object's `Screening`); unanswered, it is a missed call without the missed-call sound. An
    /// unknown id and an answered call are refused by name; silencing twice changes nothing.
    func testSilenceEndsTheRingAndTheCallIsAQuietMissedCall() throws {
        try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])

        let (call, _) = try ringSeen("+15551230003")
        let ring = sessionTraffic.waitFor(isCall("TriggerFeedback", incoming))
        let ringID = try XCTUnwrap(ring.flatMap { feedbackID(of: $0) })
        let id = try XCTUnwrap(nextEvent(telwatch, "incoming")?["call_id"] as? String)

        try silence(id)
        XCTAssertEqual(sessionTraffic.waitFor(isCall("EndFeedback"))?.firstUInt32, ringID, "the ring ended")
        let screened = try XCTUnwrap(nextEvent(telwatch, "screened"), telwatch.log())
        XCTAssertEqual(screened["call_id"] as? String, id)
        XCTAssertEqual(screened["action"] as? String, "silence")
        XCTAssertEqual(screened["rule"] as? String, "user")
        let object = "/io/telwatch/Monitor1/Call/" + id.filter { $0 != "-" }
        let value = try logind.observer.callValues(Self.api, object, BusDaemon.propertiesInterface, "Get",
                                                   [.string("io.telwatch.Call1"), .string("Screening")], timeout: 10)
        XCTAssertEqual(value.first?.string, "silence")

        try silence(id)
        XCTAssertThrowsError(try silence("00000000-0000-4000-8000-000000000000")) {
            XCTAssertEqual(errorName($0), "io.telwatch.Monitor1.Error.NoSuchCall", "\($0)")
        }
        try setStateSeen(call, .terminated, reason: .terminated)
        let missed = try XCTUnwrap(nextEvent(telwatch, "missed"), "a silenced call nobody answered is missed")
        XCTAssertEqual(missed["call_id"] as? String, id)

        // An answered call does not ring: refused by name.
        let (second, _) = try ringSeen("+15551230004")
        let secondID = try XCTUnwrap(nextEvent(telwatch, "incoming")?["call_id"] as? String)
        try setStateSeen(second, .active, reason: .accepted)
        XCTAssertNotNil(nextEvent(telwatch, "connected"))
        XCTAssertThrowsError(try silence(secondID)) {
            XCTAssertEqual(errorName($0), "io.telwatch.Monitor1.Error.NotRinging", "\($0)")
        }
        try setStateSeen(second, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
        telwatch.terminate()
        sessionTraffic.drain()
        XCTAssertEqual(sessionTraffic.seen().filter(isCall("TriggerFeedback", missedCall)).count, 0,
                       "no missed-call sound for a silenced call")
        XCTAssertEqual(sessionTraffic.seen().filter(isCall("TriggerFeedback", incoming)).count, 2)
    }

    /// In feedbackd's `silent` profile the ring is asked for as always, without a profile hint of
    /// telwatch's own, and feedbackd plays nothing; back in `full`, the next call rings.
    func testInFeedbackdsSilentProfileTheRingFollowsTheProfile() throws {
        let feedbackd = try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        func profile(_ name: String) throws {
            let set = try session.run(["gdbus", "call", "--address", session.address, "--dest", "org.sigxcpu.Feedback",
                                       "--object-path", "/org/sigxcpu/Feedback", "--method",
                                       "org.freedesktop.DBus.Properties.Set", "org.sigxcpu.Feedback", "Profile",
                                       "<'\(name)'>"])
            XCTAssertEqual(set.status, .exited(0), set.log)
        }
        try profile("silent")
        let (first, _) = try ringSeen("+15551230005")
        let ring = try XCTUnwrap(sessionTraffic.waitFor(isCall("TriggerFeedback", incoming)))
        XCTAssertFalse(ring.hasArgument(#"string "profile""#), "telwatch never overrides the user's profile")
        let ringID = try XCTUnwrap(feedbackID(of: ring))
        let ended = sessionTraffic.waitFor { $0.member == "FeedbackEnded" && $0.firstUInt32 == ringID }
        XCTAssertNotNil(ended, "feedbackd played nothing and ended the feedback:\n\(feedbackd.log())")
        try setStateSeen(first, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))

        try profile("full")
        let (second, _) = try ringSeen("+15551230006")
        let secondRing = try XCTUnwrap(sessionTraffic.waitFor(isCall("TriggerFeedback", incoming)), telwatch.log())
        let secondID = try XCTUnwrap(feedbackID(of: secondRing))
        try setStateSeen(second, .active, reason: .accepted)
        XCTAssertEqual(sessionTraffic.waitFor(isCall("EndFeedback"))?.firstUInt32, secondID, "the full profile's ring")
        try setStateSeen(second, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
        telwatch.terminate()
        XCTAssertEqual(telwatch.log(), "", "a silent profile is no trouble to say")
    }
}
