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

    /// Why every number is checked before ModemManager sees it: Debian's ModemManager (1.20,
    /// 1.24) writes a `;` in a number into its ATD as it is, and the modem runs what follows.
    func testModemManagerItselfPassesACommandInANumberToTheModem() throws {
        try daemon.start()
        let mark = try modem.mark()
        let call = try? daemon.dial("+1555;+CFUN=0")
        XCTAssertEqual(try modem.awaitCommand("CFUN=0", since: mark), "ATD+1555;+CFUN=0;")
        if let call { try? daemon.hangup(call) }
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
}
