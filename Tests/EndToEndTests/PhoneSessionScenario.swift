import Glibc
import TestSupport
import XCTest

/// The phone actions end to end: the real daemon on the simulated modem (system bus) and, on a
/// second private bus playing the user's session bus, Debian's real feedbackd, the project's
/// callaudiod template and dbusmock's notification server; `dbus-monitor` there shows what
/// telwatch asked of them. Written once for both daemons, like the other scenarios.
extension EndToEndTestCase {
    func phoneSessionRingsRoutesAudioAndNotifies() throws {
        let session = try BusFixture()
        defer { session.stop() }
        try session.startFeedbackd()
        try session.startMock(template: "callaudiod", owning: "org.mobian_project.CallAudio")
        try session.startMock(template: "notification_daemon", owning: "org.freedesktop.Notifications")
        let traffic = try BusMonitor(session)
        func call(_ member: String, _ argument: String? = nil) -> (MonitoredMessage) -> Bool {
            { $0.kind == "method call" && $0.member == member && (argument.map($0.hasArgument) ?? true) }
        }
        let incoming = #"string "phone-incoming-call""#
        try startDaemonAndTelwatch(["--feedback", "--call-audio", "--notify", "--session-bus", session.address])

        // A call rings, is answered; a second one waits, the first is held and the second answered.
        _ = try incomingAnswered("+15551111")
        let ring = try XCTUnwrap(traffic.waitFor(call("TriggerFeedback", incoming)), "no ring")
        let afterRing = traffic.position
        let id = traffic.reply(to: ring)?.firstUInt32
        XCTAssertEqual(traffic.waitFor(call("EndFeedback"))?.firstUInt32, id, "the ring did not end on answer")
        XCTAssertNotNil(traffic.waitFor(from: afterRing, call("SelectMode", "uint32 1")), "no call mode on answer")
        let second = try modem.waiting("+15552222")
        world.expect([line("incoming", "B", detail: "waiting", dir: "incoming", number: "+15552222", live: 2)])
        XCTAssertNotNil(traffic.waitFor(call("TriggerFeedback", #"string "phone-call-waiting""#)))
        let mark = try modem.mark()
        try daemon.holdAndAnswer()
        try modem.awaitCommand("^AT\\+CHLD=2$", since: mark)
        world.expect([line("connected", "A", prev: "connected", detail: "held", dir: "incoming", number: "+15551111", live: 2),
                      line("connected", "B", prev: "incoming", detail: "active", dir: "incoming", number: "+15552222", live: 2)])
        XCTAssertNotNil(traffic.waitFor(call("EndFeedback")), "the waiting call's ring did not end")
        try modem.remoteHangup(second)
        world.expect([line("disconnected", "B", prev: "connected", dir: "incoming", number: "+15552222",
                           reason: reasons.remoteHangup, live: 1)])
        try daemon.hangupAll()
        world.expect([line("disconnected", "A", prev: "connected", dir: "incoming", number: "+15551111",
                           reason: reasons.hangupAll, live: 0), runStopped])
        XCTAssertNotNil(traffic.waitFor(call("SelectMode", "uint32 0")))

        // A call that rings out: its ring ends, the missed-call feedback and a notification.
        try modem.ring("+15553333")
        expectCallStartingARun(line("incoming", "C", detail: "ringing", dir: "incoming", number: "+15553333", live: 1),
                               reason: "incoming")
        XCTAssertNotNil(traffic.waitFor(call("TriggerFeedback", incoming)))
        try modem.remoteHangup()
        world.expect([line("disconnected", "C", prev: "incoming", dir: "incoming", number: "+15553333",
                           reason: reasons.callerGaveUp, flags: ["missed"], live: 0),
                      line("missed", "C", state: "disconnected", dir: "incoming", number: "+15553333",
                           reason: reasons.callerGaveUp, flags: ["missed"], live: 0), runStopped])
        XCTAssertNotNil(traffic.waitFor(call("EndFeedback")))
        XCTAssertNotNil(traffic.waitFor(call("TriggerFeedback", #"string "phone-missed-call""#)))
        let notify = traffic.waitFor(call("Notify"))
        XCTAssertTrue(notify?.arguments.contains { $0.hasPrefix(#"string "+15553333 at "#) } ?? false,
                      "\(notify?.arguments ?? [])")
        world.stopTelwatch()
        traffic.drain()
        let modes = traffic.seen().filter(call("SelectMode")).map(\.arguments)
        XCTAssertEqual(modes, [["uint32 1"], ["uint32 0"]], "call mode once for the two calls, released once")
    }
}
