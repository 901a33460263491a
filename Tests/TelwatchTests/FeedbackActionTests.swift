import CallMonitor
import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// `--feedback` against Debian's real feedbackd on a private session bus.
final class FeedbackActionTests: PhoneActionTestCase {
    let incoming = #"string "phone-incoming-call""#
    let missedCall = #"string "phone-missed-call""#

    /// A call rings from its `incoming` until it is answered; a call that rings out rings until
    /// it is missed, then the missed-call feedback plays once. Each within 50 ms of the stack's
    /// signal, by the buses' own timestamps, and feedbackd really ends each ring.
    func testRingsWhileACallRingsAndStopsOnAnswerAndMiss() throws {
        let feedbackd = try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])

        let (first, added) = try ringSeen("+15551230001")
        let ring = sessionTraffic.waitFor(isCall("TriggerFeedback", incoming))
        assertPrompt(ring, after: added, "the ring")
        XCTAssertEqual(ring?.destination.map { $0.hasPrefix(":") }, true, "sent to feedbackd's unique name")
        let id = try XCTUnwrap(ring.flatMap { feedbackID(of: $0) })
        XCTAssertNotNil(nextEvent(telwatch, "incoming"))

        let answered = try setStateSeen(first, .active, reason: .accepted)
        let end = sessionTraffic.waitFor(isCall("EndFeedback"))
        assertPrompt(end, after: answered, "the end of the ring on answer")
        XCTAssertEqual(end?.firstUInt32, id)
        XCTAssertNotNil(sessionTraffic.waitFor { $0.member == "FeedbackEnded" && $0.firstUInt32 == id },
                        "feedbackd never ended the ring:\n\(feedbackd.log())")
        try setStateSeen(first, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))

        let (second, _) = try ringSeen("+15551230002")
        let secondRing = sessionTraffic.waitFor(isCall("TriggerFeedback", incoming))
        let secondID = try XCTUnwrap(secondRing.flatMap { feedbackID(of: $0) })
        let beforeEnd = sessionTraffic.position
        let gaveUp = try setStateSeen(second, .terminated, reason: .terminated)
        let secondEnd = sessionTraffic.waitFor(isCall("EndFeedback"))
        assertPrompt(secondEnd, after: gaveUp, "the end of the ring of a missed call")
        XCTAssertEqual(secondEnd?.firstUInt32, secondID)
        // The missed-call feedback may go out before the ring's end (which waits for nothing)
        // or after it: looked for from the end of the call on, in either order.
        XCTAssertNotNil(sessionTraffic.waitFor(from: beforeEnd, isCall("TriggerFeedback", missedCall)),
                        "no missed-call feedback")
        XCTAssertNotNil(nextEvent(telwatch, "missed"))
        telwatch.terminate()
        sessionTraffic.drain()
        let triggers = sessionTraffic.seen().filter { $0.member == "TriggerFeedback" }
        XCTAssertEqual(triggers.count, 3, "two rings and one missed call: \(triggers)")
        XCTAssertEqual(telwatch.log(), "", "nothing to say when feedbackd works")
    }

    /// telwatch killed mid-ring: feedbackd sees its client go and ends the ring itself.
    func testARingEndsWhenTelwatchIsKilled() throws {
        let feedbackd = try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        _ = try ringSeen("+15551230001")
        let ring = sessionTraffic.waitFor(isCall("TriggerFeedback", incoming))
        let id = try XCTUnwrap(ring.flatMap { feedbackID(of: $0) })

        telwatch.signal(SIGKILL)
        XCTAssertNotNil(telwatch.wait(timeout: 5))
        let ended = sessionTraffic.waitFor { $0.kind == "signal" && $0.member == "FeedbackEnded" && $0.firstUInt32 == id }
        XCTAssertNotNil(ended, "the ring outlived telwatch:\n\(feedbackd.log())")
        XCTAssertTrue(feedbackd.isRunning, "feedbackd survived its client's death")
    }

    /// A session bus that starts feedbackd on demand (D-Bus activation, as a phone session's
    /// does) and no feedbackd running: telwatch has the bus start it, and the first call rings.
    func testAnActivatableFeedbackdIsStarted() throws {
        let services = session.directory + "/services"
        try Files.makeDirectory(services)
        let home = session.directory + "/home"
        try Files.makeDirectory(home)
        let activated = try BusFixture(serviceDirectory: services)
        defer {
            // The bus started it, not the test: it is found by its connection and killed by pid.
            Self.killOwner(of: "org.sigxcpu.Feedback", on: activated)
            activated.stop()
        }
        try Files.write(services + "/org.sigxcpu.Feedback.service", """
            [D-BUS Service]
            Name=org.sigxcpu.Feedback
            Exec=/usr/bin/env DBUS_SESSION_BUS_ADDRESS=\(activated.address) FEEDBACK_THEME=\(Repository.path("Tests/Fixtures/feedbackd/theme.json")) GSETTINGS_BACKEND=memory HOME=\(home) /usr/libexec/feedbackd

            """)
        let traffic = try BusMonitor(activated)
        try startModemManager()
        let telwatch = try startWatch(["--feedback", "--session-bus", activated.address])
        _ = try ringSeen("+15551230001")
        let ring = traffic.waitFor(timeout: 15, isCall("TriggerFeedback", incoming))
        XCTAssertEqual(ring.flatMap { traffic.reply(to: $0) }?.kind, "method return", "no ring:\n\(telwatch.log())")
        XCTAssertEqual(telwatch.log(), "", "nothing to say: the bus started feedbackd")
    }

    /// Kills the process that owns `name` on `fixture`'s bus, by its pid (the bus started it).
    static func killOwner(of name: String, on fixture: BusFixture) {
        guard let loop = try? EventLoop(), let bus = try? Connection(.address(fixture.address), loop: loop) else { return }
        defer { bus.close() }
        guard let reply = try? bus.callBlocking(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", name, timeout: 5),
            let pid = try? reply.decode(UInt32.self) else { return }
        kill(pid_t(pid), SIGKILL)
        _ = ProcessTable.waitForEnd(pid_t(pid), timeout: 5)
    }

    /// telwatch stopped mid-ring (SIGTERM): the ring ends as it leaves. It ends it itself
    /// (`EndFeedback`) when feedbackd's answer with the ring's id has reached it; a SIGTERM that
    /// comes first leaves the ring to feedbackd, which ends a client's feedbacks when it leaves
    /// the bus. Either way feedbackd says the ring ended.
    func testARingEndsWhenTelwatchStops() throws {
        let feedbackd = try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        _ = try ringSeen("+15551230001")
        let ring = sessionTraffic.waitFor(isCall("TriggerFeedback", incoming))
        let id = try XCTUnwrap(ring.flatMap { feedbackID(of: $0) })
        XCTAssertNotNil(nextEvent(telwatch, "incoming"))
        telwatch.signal(SIGTERM)
        XCTAssertEqual(telwatch.wait(timeout: 10), .exited(0))
        XCTAssertNotNil(sessionTraffic.waitFor { $0.member == "FeedbackEnded" && $0.firstUInt32 == id },
                        "the ring never ended:\n\(feedbackd.log())")
    }

    /// feedbackd killed mid-ring: one line, no crash; started again, the call still ringing rings
    /// again, and so does the next call.
    func testFeedbackdKilledMidRingAndRestarted() throws {
        let feedbackd = try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        let (first, _) = try ringSeen("+15551230001")
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("TriggerFeedback", incoming)))

        feedbackd.signal(SIGKILL)
        XCTAssertNotNil(feedbackd.wait(timeout: 5))
        XCTAssertTrue(Files.waitUntil(telwatch.logPath ?? "", timeout: 10) { telwatch.log().contains("left the session bus") },
                      "telwatch said nothing: \(telwatch.log())")
        try startFeedbackd()
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("TriggerFeedback", incoming)),
                        "the call still ringing did not ring on the new feedbackd")
        try setStateSeen(first, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))

        _ = try ringSeen("+15551230002")
        let next = sessionTraffic.waitFor(isCall("TriggerFeedback", incoming))
        XCTAssertNotNil(next.flatMap { feedbackID(of: $0) }, "the next call did not ring")
        XCTAssertTrue(telwatch.isRunning)
        let lines = telwatch.log().split(separator: "\n")
        XCTAssertEqual(lines.count, 2, "one line as it went, one as it came back: \(lines)")
    }

    /// No feedbackd at start: one line; the calls, the run and the other sinks go on; once
    /// feedbackd appears, the next call rings.
    func testAbsentFeedbackdIsSaidOnceAndUsedOnceItAppears() throws {
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        let (first, _) = try ringSeen("+15551230001")
        XCTAssertNotNil(nextEvent(telwatch, "incoming"), "the calls go on without feedbackd")
        try setStateSeen(first, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
        XCTAssertEqual(telwatch.log(),
                       "telwatch: feedback: org.sigxcpu.Feedback is not on the session bus; feedback starts when it appears\n")

        try startFeedbackd()
        _ = try ringSeen("+15551230002")
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("TriggerFeedback", incoming)), "no ring once feedbackd was there")
    }

    /// A second call while one is active rings softly (`phone-call-waiting`) until it is answered.
    func testAWaitingCallRingsAsCallWaiting() throws {
        try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        let (first, _) = try ringSeen("+15551230001")
        try setStateSeen(first, .active, reason: .accepted)
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("EndFeedback")))

        let second = try control("Wait", [.objectPath(try .init(Self.modem0)), .string("+15551230002")])
            .first?.objectPath?.rawValue ?? ""
        let waiting = sessionTraffic.waitFor(isCall("TriggerFeedback", #"string "phone-call-waiting""#))
        let id = try XCTUnwrap(waiting.flatMap { feedbackID(of: $0) })
        try setStateSeen(first, .held, reason: .accepted)
        let answered = try setStateSeen(second, .active, reason: .accepted)
        let end = sessionTraffic.waitFor(isCall("EndFeedback"))
        assertPrompt(end, after: answered, "the end of the waiting call's ring")
        XCTAssertEqual(end?.firstUInt32, id)
        XCTAssertEqual(telwatch.log(), "")
    }

    /// A theme with no `phone-call-waiting` (feedbackd ends such an event at once): said once,
    /// and the waiting call rings as an incoming one rather than not at all.
    func testAThemeWithoutCallWaitingRingsAWaitingCallAsACall() throws {
        try startFeedbackd(theme: "theme-no-waiting.json")
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        let (first, _) = try ringSeen("+15551230001")
        try setStateSeen(first, .active, reason: .accepted)
        _ = try control("Wait", [.objectPath(try .init(Self.modem0)), .string("+15551230002")])
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("TriggerFeedback", #"string "phone-call-waiting""#)))
        let ring = sessionTraffic.waitFor(isCall("TriggerFeedback", incoming))
        XCTAssertNotNil(ring.flatMap { feedbackID(of: $0) }, "the waiting call did not ring at all")
        XCTAssertEqual(telwatch.log(), "telwatch: feedback: the feedback theme has no phone-call-waiting; "
                       + "a waiting call rings as phone-incoming-call\n")
    }

    /// feedbackd stopped (SIGSTOP: it answers nothing) while 20 calls ring and are missed: one
    /// ring trigger and one missed-call feedback go out, not 40 calls piling up at the bus.
    func testAFeedbackdThatDoesNotAnswerCostsOneCallAtATime() throws {
        let feedbackd = try startFeedbackd()
        try startModemManager()
        let telwatch = try startWatchWithActions(["--feedback"])
        feedbackd.signal(SIGSTOP)
        defer { feedbackd.signal(SIGCONT) }
        let mark = sessionTraffic.position
        for index in 0..<20 {
            let (call, _) = try ringSeen("+1555123\(1000 + index)")
            try setStateSeen(call, .terminated, reason: .terminated)
            XCTAssertNotNil(nextEvent(telwatch, "missed"))
        }
        try setStateSeen(try ringSeen("+15551239999").call, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
        sessionTraffic.drain()
        let triggers = sessionTraffic.seen(from: mark).filter(isCall("TriggerFeedback"))
        XCTAssertEqual(triggers.map { $0.arguments[1] }, [incoming, missedCall], "\(triggers)")
        XCTAssertTrue(telwatch.isRunning)
    }
}
