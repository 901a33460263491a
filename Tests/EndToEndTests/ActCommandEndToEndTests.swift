/// `telwatch answer`, `hangup`, `deflect`, `tones` and `dial` on Debian's ModemManager and the
/// simulated AT modem.
final class ModemManagerActCommandTests: EndToEndTestCase {
    override var kind: DaemonKind { .modemManager }

    func testEachActReachesTheModemFromTheCommandLine() throws { try actsFromTheCommandLine() }
    func testRefusalsFromTheCommandLineNeverReachTheModem() throws { try refusalsFromTheCommandLine() }
    func testAnsweringAWaitingCallHoldsTheConnectedOne() throws { try answerWaitingFromTheCommandLine() }
}

/// The same on Debian's oFono.
final class OfonoActCommandTests: EndToEndTestCase {
    override var kind: DaemonKind { .ofono }
    override var initialDirection: String { "unknown" }

    func testEachActReachesTheModemFromTheCommandLine() throws { try actsFromTheCommandLine() }
    func testRefusalsFromTheCommandLineNeverReachTheModem() throws { try refusalsFromTheCommandLine() }
    func testAnsweringAWaitingCallHoldsTheConnectedOne() throws { try answerWaitingFromTheCommandLine() }
}
