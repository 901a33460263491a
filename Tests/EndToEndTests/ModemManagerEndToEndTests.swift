import XCTest

/// Debian's ModemManager (unmodified, test mode) on the simulated AT modem, watched by telwatch.
final class ModemManagerEndToEndTests: EndToEndTestCase {
    override var kind: DaemonKind { .modemManager }

    func testIncomingAnsweredThenRemoteHangup() throws { try incomingAnsweredThenRemoteHangup() }
    func testIncomingMissed() throws { try incomingMissed() }
    func testIncomingNumberArrivesLate() throws { try incomingNumberArrivesLate() }
    func testOutgoingAnsweredThenLocalHangup() throws { try outgoingAnsweredThenLocalHangup() }
    func testOutgoingBusy() throws { try outgoingBusy() }
    func testSecondCallWaitingThenHoldAndAnswer() throws { try secondCallWaitingThenHoldAndAnswer() }
    func testDaemonKilledMidCallThenRestarted() throws { try daemonKilledMidCallThenRestarted() }
    func testCallLiveBeforeTelwatchStartsIsInitial() throws { try callLiveBeforeTelwatchStartsIsInitial() }
    func testTelwatchKilledMidCallThenRestarted() throws { try telwatchKilledMidCallThenRestarted() }
    func testPhoneSessionRingsRoutesAudioAndNotifies() throws { try phoneSessionRingsRoutesAudioAndNotifies() }
    func testModemIdentityOnEveryLine() throws { try modemIdentityOnEveryLine() }
    func testScreeningHangsUpABlockedCallerAtTheStack() throws { try screeningHangsUpABlockedCallerAtTheStack() }
    func testScreeningByWhoCallsAndWhen() throws { try screeningByWhoCallsAndWhen() }
    func testScreeningRefusedHangUpRings() throws { try screeningRefusedHangUpRings() }
    func testScreeningStandsAsideAfterAnEmergencyCall() throws { try screeningStandsAsideAfterAnEmergencyCall() }
    func testScreeningDeflectsACallAtTheStack() throws { try screeningDeflectsACallAtTheStack() }
    func testScreeningRunsTheGateCommandAndRejects() throws { try screeningRunsTheGateCommandAndRejects() }
    func testBlockAndAllowFromTheCommandLineReachARunningTelwatch() throws {
        try blockAndAllowFromTheCommandLineReachARunningTelwatch()
    }
}
