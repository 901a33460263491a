import BGRunManager
import DBus
import Glibc
import Loop
import Processes
import TestSupport
import XCTest

/// A private bus with dbusmock's logind, and the run manager and hook runner under test.
/// Everything a test starts is dropped in tearDown: the fixture kills its processes by pid,
/// and dropping the manager and hook runner kills and reaps their children.
class RunTestCase: XCTestCase {
    var harness: LogindHarness!
    var manager: BGRunManager?
    var hooks: HookRunner?
    private(set) var events: [RunEvent] = []
    /// Monotonic time each event arrived, for timing assertions.
    private(set) var eventArrivals: [Double] = []
    private(set) var outcomes: [HookOutcome] = []

    var loop: EventLoop { harness.loop }
    var directory: String { harness.directory }
    var stateDirectory: String { directory + "/state" }

    func startHarness(logind: Bool = true) throws {
        harness = try LogindHarness(startLogind: logind)
    }

    override func tearDown() {
        manager = nil
        hooks = nil
        harness?.stop()
        harness = nil
        events = []
        eventArrivals = []
        outcomes = []
    }

    @discardableResult
    func makeHooks(directory hookDirectory: String? = nil, commands: [String: [[String]]] = [:], timeout: Double = 10,
                   killGrace: Double = 1, environment: [String]? = nil) -> HookRunner {
        let settings = HookSettings(directory: hookDirectory, commands: commands, timeout: timeout, killGrace: killGrace,
                                    stdout: .null, stderr: .inherit,
                                    baseEnvironment: environment ?? Subprocess.currentEnvironment())
        let runner = HookRunner(loop: loop, settings: settings)
        runner.onOutcome = { [unowned self] outcome in self.outcomes.append(outcome) }
        hooks = runner
        return runner
    }

    func makeManager(withLockBus: Bool = true, stateDirectory state: String? = nil,
                     _ configure: (inout RunConfiguration) -> Void = { _ in }) throws -> BGRunManager {
        var configuration = RunConfiguration(commandStdout: .null, stateDirectory: state ?? stateDirectory)
        configure(&configuration)
        let made = try BGRunManager(loop: loop, lockBus: withLockBus ? harness.connection : nil,
                                    configuration: configuration, hooks: hooks) { [unowned self] event in
            self.events.append(event)
            self.eventArrivals.append(monotonicNow())
        }
        manager = made
        return made
    }

    /// One turn of the loop: what it does after a turn's events (the run record) is done.
    func runOneTurn() {
        loop.iterate(maxWait: 0)
    }

    func events(_ match: (RunEvent.Kind) -> Bool) -> [RunEvent] { events.filter { match($0.kind) } }

    func forgetEvents() {
        events.removeAll()
        eventArrivals.removeAll()
    }

    func names() -> [String] { events.map(\.name) }

    /// Runs the loop until at least `count` events match (bounded); returns the last of them.
    @discardableResult
    func waitForEvent(_ what: String, count: Int = 1, timeout: Double = 10, file: StaticString = #filePath,
                      line: UInt = #line, _ match: @escaping (RunEvent.Kind) -> Bool) -> RunEvent? {
        let found = harness.run(until: { self.events.filter { match($0.kind) }.count >= count }, timeout: timeout)
        XCTAssertTrue(found, "no \(what) within \(timeout) s; events: \(names())", file: file, line: line)
        return events.last { match($0.kind) }
    }

    /// Monotonic arrival time of the first event matching `match`.
    func arrival(_ match: (RunEvent.Kind) -> Bool) -> Double? {
        events.firstIndex { match($0.kind) }.map { eventArrivals[$0] }
    }

    func waitFor(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                 _ condition: @escaping () -> Bool) {
        XCTAssertTrue(harness.run(until: condition, timeout: timeout), "timed out waiting for \(what)", file: file, line: line)
    }

    /// Waits for `count` hook outcomes in all.
    func waitForOutcomes(_ count: Int, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line) {
        waitFor("\(count) hook outcomes (have \(outcomes.count): \(outcomes.map(\.result)))", timeout: timeout,
                file: file, line: line) { self.outcomes.count >= count }
    }

    func waitForNoInhibitors(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotNil(harness.waitForInhibitors { $0.isEmpty }, "the inhibitor was never released", file: file, line: line)
    }
}

extension RunEvent.Kind {
    var isStarted: Bool { if case .started = self { return true }; return false }
    var isLockTaken: Bool { if case .lockTaken = self { return true }; return false }
    var isLockRetaken: Bool { if case .lockRetaken = self { return true }; return false }
    var isLockUnavailable: Bool { if case .lockUnavailable = self { return true }; return false }
    var isExpired: Bool { if case .expired = self { return true }; return false }
    var isHeartbeat: Bool { if case .heartbeat = self { return true }; return false }
    var isStale: Bool { if case .staleRunRecovered = self { return true }; return false }
    var stopReason: String? { if case .stopped(_, let reason, _) = self { return reason.rawValue }; return nil }
    var commandExit: (status: ChildExit, early: Bool)? {
        if case .runCommandExited(_, let status, let early) = self { return (status, early) }
        return nil
    }
}
