import CallMonitor
import DBus
import Loop
import TestSupport

/// A `CallMonitor` in the test process, on the test's own connection to the private bus, for the
/// acts (`CallMonitor.act`, `dial`) on the real daemon. Every wait runs the loop, bounded.
final class ActingMonitor {
    let monitor: CallMonitor
    private let bus: BusClient

    init(bus: BusClient, kind: DaemonKind) throws {
        self.bus = bus
        var synced = false
        monitor = CallMonitor(connection: bus.connection, backends: kind == .modemManager ? .modemManager : .ofono,
                              onEvent: { _ in }, onNotice: { notice in
                                  if case .synced = notice { synced = true }
                              })
        try monitor.start()
        try bus.wait("the monitor's first sync", timeout: 20) { synced }
    }

    func stop() { monitor.stop() }

    /// Waits until the live calls are as `condition` wants them.
    func waitForCalls(_ what: String, timeout: Double = 20, _ condition: ([CallSnapshot]) -> Bool) throws {
        try bus.wait(what, timeout: timeout) { condition(monitor.liveCalls) }
    }

    /// Waits until the live call from or to `number` is in `state`; returns it.
    func call(_ number: String, in state: CallState) throws -> CallSnapshot {
        try waitForCalls("a call with \(number) \(state)") { calls in
            calls.contains { $0.number == number && $0.state == state }
        }
        return monitor.liveCalls.first { $0.number == number && $0.state == state }!
    }

    func waitIdle() throws { try waitForCalls("no live call") { $0.isEmpty } }

    /// Asks for `act` and runs the loop until it is answered.
    func act(_ act: CallAct, on key: CallKey) throws -> CallActReport {
        var report: CallActReport?
        monitor.act(act, on: key) { report = $0 }
        try bus.wait("the answer to \(act)", timeout: ActAnswerWait.seconds) { report != nil }
        return report!
    }

    func dial(_ number: String) throws -> CallActReport {
        var report: CallActReport?
        monitor.dial(number) { report = $0 }
        try bus.wait("the answer to dialling", timeout: ActAnswerWait.seconds) { report != nil }
        return report!
    }

    func hangUpAll() throws -> HangUpAllReport {
        var report: HangUpAllReport?
        monitor.hangUpAll { report = $0 }
        try bus.wait("the answer to hanging up all", timeout: ActAnswerWait.seconds) { report != nil }
        return report!
    }

    /// What `act` answers at once, without the loop running: a refusal before the stack is asked.
    func refusal(_ act: CallAct, on key: CallKey) -> CallActReport? {
        var report: CallActReport?
        monitor.act(act, on: key) { report = $0 }
        return report
    }

    func dialRefusal(_ number: String) -> CallActReport? {
        var report: CallActReport?
        monitor.dial(number) { report = $0 }
        return report
    }
}

/// How long a test waits for an act's answer: longer than a stack may take (30 s per method call).
enum ActAnswerWait {
    static let seconds = 40.0
}
