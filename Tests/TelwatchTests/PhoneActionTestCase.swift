import CallMonitor
import Glibc
import Loop
import TestSupport
import XCTest

/// A phone session beside the stacks: a second private bus playing the user's *session* bus
/// (the stacks stay on the test's system bus), the real feedbackd and callaudiod or the
/// project's mocks on it, and `dbus-monitor` on each bus to see, with the daemons' own
/// timestamps, what telwatch sends.
class PhoneActionTestCase: CommandTestCase {
    var session: BusFixture!
    /// What crosses the session bus (telwatch ↔ the phone's services).
    var sessionTraffic: BusMonitor!
    /// What crosses the system bus (the stack's signals).
    var systemTraffic: BusMonitor!

    override func setUpWithError() throws {
        try super.setUpWithError()
        session = try BusFixture()
        sessionTraffic = try BusMonitor(session)
        systemTraffic = try BusMonitor(fixture)
    }

    override func tearDown() {
        session?.stop()
        session = nil
        super.tearDown()
    }

    @discardableResult
    func startFeedbackd(theme: String = "theme.json") throws -> TestProcess {
        try session.startFeedbackd(theme: theme)
    }

    /// `telwatch watch --json` following the fake ModemManager on the system bus, with phone
    /// actions on the session bus.
    func startWatchWithActions(_ actions: [String]) throws -> TestProcess {
        try startWatch(actions + ["--session-bus", session.address])
    }

    func isCall(_ member: String, _ argument: String? = nil) -> (MonitoredMessage) -> Bool {
        { $0.kind == "method call" && $0.member == member && (argument.map($0.hasArgument) ?? true) }
    }

    /// The id feedbackd gave the trigger seen on the bus.
    func feedbackID(of trigger: MonitoredMessage, file: StaticString = #filePath, line: UInt = #line) -> UInt32? {
        let reply = sessionTraffic.reply(to: trigger)
        XCTAssertEqual(reply?.kind, "method return", "feedbackd did not give the ring an id", file: file, line: line)
        return reply?.firstUInt32
    }

    /// The action came in answer to its cause: seen on the session bus after the stack's message
    /// on the system bus. How soon is a benchmark's figure (telwatch-bench's phone actions,
    /// bench/actionsbench.py), not a bound here: a loaded machine (or AddressSanitizer) may take
    /// any time. Each message is stamped by the `dbus-monitor` of its bus as it receives it, so
    /// the two monitors' scheduling can put the action a few ms "before" its cause: that much is
    /// allowed.
    func assertPrompt(_ action: MonitoredMessage?, after cause: MonitoredMessage?, _ what: String,
                      file: StaticString = #filePath, line: UInt = #line) {
        guard let action, let cause else { return XCTFail("\(what): not seen on the buses", file: file, line: line) }
        XCTAssertGreaterThanOrEqual(action.time - cause.time, -0.010, "\(what) came before its cause", file: file, line: line)
    }

    /// The fake ModemManager's `Ring`, and its `CallAdded` as the system bus routed it.
    func ringSeen(_ number: String) throws -> (call: String, signal: MonitoredMessage?) {
        let call = try ring(number)
        let signal = systemTraffic.waitFor { $0.kind == "signal" && $0.member == "CallAdded" }
        return (call, signal)
    }

    /// `SetState` on the fake, and its `StateChanged` as the system bus routed it.
    @discardableResult
    func setStateSeen(_ call: String, _ state: ModemManagerCallState, reason: ModemManagerCallStateReason)
        throws -> MonitoredMessage? {
        try setState(call, state, reason: reason)
        return systemTraffic.waitFor { $0.kind == "signal" && $0.member == "StateChanged" && $0.fields["path"] == call }
    }
}
