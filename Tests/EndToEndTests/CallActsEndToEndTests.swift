import CallMonitor
import XCTest

/// Acts on calls on Debian's ModemManager and the simulated AT modem.
final class ModemManagerCallActsTests: EndToEndTestCase {
    override var kind: DaemonKind { .modemManager }

    func testActsReachTheModem() throws { try actsReachTheModem() }
    func testRefusalsNeverReachTheModem() throws { try refusalsNeverReachTheModem() }
    func testActsReachTheModemInTime() throws { try actsReachTheModemInTime() }
    func testStackRefusalComesInItsOwnWords() throws { try stackRefusalComesInItsOwnWords() }
    func testActWhoseStackDiesIsAnswered() throws { try actWhoseStackDiesIsAnswered() }
    func testAnswerRacingTheCallersHangUpIsAnswered() throws { try answerRacingTheCallersHangUpIsAnswered() }
    func testAPIActsReachTheModemAndAreTold() throws { try apiActsReachTheModemAndAreTold() }
    func testAPIRefusalsNeverReachTheModem() throws { try apiRefusalsNeverReachTheModem() }
    func testAPIActRefusedByPolkitIsNotPermitted() throws { try apiActRefusedByPolkitIsNotPermitted() }

    /// Why every number is checked before ModemManager sees it: Debian's ModemManager (1.20,
    /// 1.24) writes a `;` in a number into its ATD as it is, and the modem runs what follows.
    func testModemManagerItselfPassesACommandInANumberToTheModem() throws {
        try daemon.start()
        let mark = try modem.mark()
        let call = try? daemon.dial("+1555;+CFUN=0")
        XCTAssertEqual(try modem.awaitCommand("CFUN=0", since: mark), "ATD+1555;+CFUN=0;")
        if let call { try? daemon.hangup(call) }
    }

    /// ModemManager asks polkit before every act: refused, the act is `stackRefused` with
    /// ModemManager's own error, and the modem hears nothing.
    func testPolkitRefusalComesInModemManagersWords() throws {
        try daemon.start()
        let acting = try ActingMonitor(bus: world.bus, kind: kind)
        defer { acting.stop() }
        try modem.ring("+15550006")
        let call = try acting.call("+15550006", in: .incoming)
        try world.bus.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                           "org.freedesktop.DBus.Mock", "AllowUnknown", [.bool(false)])
        let mark = try modem.mark()
        for act in [CallAct.answer, .hangUp, .deflect(to: "+15559876")] {
            let report = try acting.act(act, on: call.key)
            guard case .stackRefused(let name, _)? = report.failure else { return XCTFail("\(act): \(report)") }
            XCTAssertEqual(name, "org.freedesktop.ModemManager1.Error.Core.Unauthorized", "\(act)")
        }
        try modem.remoteHangup()
        try acting.waitIdle()
        for pattern in ["^ATA$", Self.hangUpCommand, "CTFR"] {
            XCTAssertNil(try modem.seen(pattern, since: mark), pattern)
        }
    }
}

/// Acts on calls on Debian's oFono and the simulated AT modem.
final class OfonoCallActsTests: EndToEndTestCase {
    override var kind: DaemonKind { .ofono }
    override var initialDirection: String { "unknown" }

    func testActsReachTheModem() throws { try actsReachTheModem() }
    func testRefusalsNeverReachTheModem() throws { try refusalsNeverReachTheModem() }
    func testActsReachTheModemInTime() throws { try actsReachTheModemInTime() }
    func testStackRefusalComesInItsOwnWords() throws { try stackRefusalComesInItsOwnWords() }
    func testActWhoseStackDiesIsAnswered() throws { try actWhoseStackDiesIsAnswered() }
    func testAnswerRacingTheCallersHangUpIsAnswered() throws { try answerRacingTheCallersHangUpIsAnswered() }
    func testAPIActsReachTheModemAndAreTold() throws { try apiActsReachTheModemAndAreTold() }
}
