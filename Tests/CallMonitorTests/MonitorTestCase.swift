import DBus
import Glibc
import TestSupport
import XCTest
@testable import CallMonitor
import Loop

/// A private bus, the project's fake ModemManager / oFono on it, and a `CallMonitor` on its own
/// connection collecting every event and notice. Mocks are driven through their control methods
/// (and their real methods) from a second connection. Every wait is bounded; every process is
/// killed by PID in tearDown.
class MonitorTestCase: XCTestCase {
    static let mockInterface = "org.freedesktop.DBus.Mock"

    var fixture: BusFixture!
    var loop: EventLoop!
    /// The monitor's connection.
    var connection: Connection!
    /// Drives the mocks (blocking calls; the monitor's messages wait in its socket meanwhile).
    var control: Connection!
    var monitor: CallMonitor!
    var mocks: [BackendKind: TestProcess] = [:]

    private(set) var events: [TrackerEvent] = []
    /// `announced` and `withdrawn`: call objects before their state is known (they hold the run).
    private(set) var announcements: [TrackerEvent] = []
    private(set) var notices: [BackendNotice] = []
    /// What the test expects `events` to read as, so far.
    private var expected: [String] = []
    /// Call ids as A, B, C… in order of first appearance.
    private var labels: [String: String] = [:]
    /// Time for the notice rate limit; tests may move it.
    var noticeTime = 1000.0
    /// Bus names besides the mocks that `settle()` must hear back from.
    var otherPeers: [String] = []

    override func setUpWithError() throws {
        fixture = try BusFixture()
        loop = try EventLoop()
        connection = try Connection(.address(fixture.address), loop: loop)
        control = try Connection(.address(fixture.address), loop: loop)
    }

    override func tearDown() {
        monitor?.stop()
        monitor = nil
        control?.close()
        control = nil
        connection?.close()
        connection = nil
        loop = nil
        fixture?.stop()
        fixture = nil
        mocks = [:]
        otherPeers = []
    }

    // MARK: Mocks

    static func root(_ kind: BackendKind) -> ObjectPath {
        kind == .ofono ? "/" : "/org/freedesktop/ModemManager1"
    }

    /// Starts the project's mock for `kind` (`parameters` is the `-p` JSON) and waits for its name.
    @discardableResult
    func startMock(_ kind: BackendKind, _ parameters: String? = nil) throws -> TestProcess {
        let process = try fixture.startMock(template: kind == .ofono ? "ofono" : "modemmanager", parameters: parameters)
        mocks[kind] = process
        try fixture.waitForName(kind.serviceName)
        return process
    }

    /// Calls a control method of the mock (org.freedesktop.DBus.Mock on its root object).
    @discardableResult
    func mock<each T: DBusType>(_ kind: BackendKind, _ member: String, _ arguments: repeat each T) throws -> Message {
        try control.callBlocking(destination: kind.serviceName, path: Self.root(kind), interface: Self.mockInterface,
                                 member: member, repeat each arguments, timeout: 10)
    }

    /// A control method that returns an object path (Ring, Wait, Dial, AddModem…).
    func mockPath<each T: DBusType>(_ kind: BackendKind, _ member: String, _ arguments: repeat each T) throws -> String {
        try mock(kind, member, repeat each arguments).decode(ObjectPath.self).rawValue
    }

    /// Calls one of the daemon's real methods, as a client (a dialer, a UI) would.
    @discardableResult
    func callMethod<each T: DBusType>(_ kind: BackendKind, _ path: String, _ interface: String, _ member: String,
                                      _ arguments: repeat each T) throws -> Message {
        try control.callBlocking(destination: kind.serviceName, path: try ObjectPath(path), interface: interface,
                                 member: member, repeat each arguments, timeout: 10)
    }

    /// SIGTERM to the mock, by PID; returns once the monitor has seen the name vanish.
    func killMock(_ kind: BackendKind, file: StaticString = #filePath, line: UInt = #line) {
        guard let process = mocks.removeValue(forKey: kind) else { return XCTFail("no \(kind) mock", file: file, line: line) }
        let mark = notices.count
        process.signal(SIGTERM)
        waitForNotice("\(kind) to vanish", after: mark, file: file, line: line) {
            if case .serviceVanished(kind, _) = $0 { return true }
            return false
        }
        XCTAssertNotNil(process.wait(timeout: 5), "the mock did not exit", file: file, line: line)
    }

    /// Runs an outside tool (gdbus, dbus-send) to completion; it must succeed.
    func run(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try fixture.run(arguments)
        XCTAssertEqual(result.status, .exited(0), "\(arguments.joined(separator: " ")): \(result.log)",
                       file: file, line: line)
    }

    // MARK: Monitor

    /// Starts a monitor and waits until each backend whose mock runs has finished its first sync.
    func startMonitor(_ selection: BackendSelection, file: StaticString = #filePath, line: UInt = #line) throws {
        monitor = CallMonitor(
            connection: connection, backends: selection, clock: wallClockNow, noticeClock: { [unowned self] in self.noticeTime },
            onEvents: { [unowned self] events, _ in for event in events { self.record(event) } },
            onNotice: { [unowned self] notice in self.notices.append(notice) })
        try monitor.start()
        for kind in selection.kinds where mocks[kind] != nil {
            waitForNotice("\(kind) to sync", file: file, line: line) { notice in
                switch notice {
                case .synced(kind, _, _), .syncRefused(kind, _): return true
                default: return false
                }
            }
        }
    }

    private func record(_ event: TrackerEvent) {
        guard let id = event.call?.id else {
            announcements.append(event)
            return
        }
        if labels[id] == nil {
            labels[id] = labels.count < 26 ? String(UnicodeScalar(UInt8(65 + labels.count))) : "C\(labels.count)"
        }
        events.append(event)
    }

    // MARK: Waiting

    /// Runs the loop until `condition` holds; fails after `timeout` seconds.
    func waitFor(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                 _ condition: () -> Bool) {
        XCTAssertTrue(loop.run(until: condition, timeout: timeout),
                      "timed out waiting for \(what); events: \(described) notices: \(notices)", file: file, line: line)
    }

    func waitForNotice(_ what: String, after mark: Int = 0, file: StaticString = #filePath, line: UInt = #line,
                       _ predicate: (BackendNotice) -> Bool) {
        waitFor(what, file: file, line: line) { notices.dropFirst(mark).contains(where: predicate) }
    }

    /// Round trips to every running mock through the monitor's own connection. The bus keeps one
    /// sender's messages in order, so when the answers are back every signal the mocks sent
    /// before has been handled, and so have the replies to what those signals made us ask
    /// (three rounds: listing → per-call read → its answer).
    func settle(file: StaticString = #filePath, line: UInt = #line) {
        let destinations = mocks.keys.map(\.serviceName) + otherPeers
        for _ in 0..<3 {
            var answers = 0
            let asked = destinations.count
            for destination in destinations {
                // libdbus answers Peer.Ping itself, on any path.
                guard let ping = try? Message.methodCall(destination: destination, path: "/",
                                                         interface: "org.freedesktop.DBus.Peer", member: "Ping")
                else { continue }
                connection.call(ping, timeout: 5) { _ in answers += 1 }
            }
            waitFor("the mocks to answer", file: file, line: line) { answers == asked }
        }
    }

    /// Adds `more` to the expected events, waits for that many, settles, and compares them all:
    /// nothing missing, nothing extra, in order.
    func expect(_ more: [String], file: StaticString = #filePath, line: UInt = #line) {
        expected += more
        let count = expected.count
        waitFor("\(count) events", file: file, line: line) { events.count >= count }
        settle(file: file, line: line)
        XCTAssertEqual(described, expected, file: file, line: line)
    }

    /// Like `expect([])`: proves nothing happened since the last check.
    func expectNothingMore(file: StaticString = #filePath, line: UInt = #line) {
        expect([], file: file, line: line)
    }

    // MARK: Reading events

    /// Events as a user would read them: `A new -> incoming.ringing incoming '+1555' reason=…`,
    /// `busy A`, `A missed`, `A updated …`, `idle A`. Calls are lettered by first appearance.
    var described: [String] { events.map(describe) }

    func describe(_ event: TrackerEvent) -> String {
        switch event {
        case let .transition(call, previous):
            let to = call.detail.map { "\(call.state.rawValue).\($0.rawValue)" } ?? call.state.rawValue
            return "\(label(call)) \(previous?.rawValue ?? "new") -> \(to) \(details(call))"
        case let .updated(call): return "\(label(call)) updated \(details(call))"
        case let .missed(call): return "\(label(call)) missed"
        case let .busy(call): return "busy \(label(call))"
        case let .idle(call): return "idle \(label(call))"
        case let .announced(key, id): return "\(id) announced \(key.path)"
        case let .withdrawn(key, id): return "\(id) withdrawn \(key.path)"
        }
    }

    private func details(_ call: CallSnapshot) -> String {
        var text = "\(call.direction.rawValue) '\(call.number)'"
        if !call.name.isEmpty { text += " name='\(call.name)'" }
        if call.multiparty { text += " multiparty" }
        if let reason = call.reason?.word { text += " reason=\(reason)" }
        if call.initial { text += " initial" }
        if call.resumed { text += " resumed" }
        return text
    }

    func label(_ call: CallSnapshot) -> String { labels[call.id] ?? "?" }

    static func snapshot(_ event: TrackerEvent) -> CallSnapshot? { event.call }

    /// The last snapshot seen of the call lettered `label`.
    func call(_ label: String, file: StaticString = #filePath, line: UInt = #line) -> CallSnapshot? {
        let found = events.compactMap(Self.snapshot).last { labels[$0.id] == label }
        if found == nil { XCTFail("no call \(label) in \(described)", file: file, line: line) }
        return found
    }

    func count(_ predicate: (BackendNotice) -> Bool) -> Int { notices.filter(predicate).count }

    var rejectedNotices: [BackendNotice] {
        notices.filter { if case .rejectedSignal = $0 { return true } else { return false } }
    }

    var malformedNotices: [BackendNotice] {
        notices.filter { if case .malformed = $0 { return true } else { return false } }
    }

    // MARK: Sleep

    /// The mock drops its signals from now on (a system asleep: its state still changes); off, they
    /// flow again, and the count of those dropped is returned.
    @discardableResult
    func loseSignals(_ kind: BackendKind, _ lose: Bool) throws -> UInt32 {
        try mock(kind, "LoseSignals", lose).decode(UInt32.self)
    }

    /// The monitor's resync after a resume, waited for until every running mock's backend has synced again.
    func resumeResync(file: StaticString = #filePath, line: UInt = #line) {
        let mark = notices.count
        monitor.resync()
        for kind in monitor.selection.kinds where mocks[kind] != nil {
            waitForNotice("\(kind) to sync again", after: mark, file: file, line: line) { notice in
                if case .synced(kind, _, _) = notice { return true }
                return false
            }
        }
    }

    /// Makes the bus deliver every signal of `interface` to the monitor's connection whatever its
    /// sender, as another subscription of the same process could: then a spoof reaches the
    /// backend's own subscription and must be caught by the owner check, not by the bus.
    func openTheDoorToSpoofs(interface: String) {
        connection.subscribe(MatchRule(interface: interface)) { _ in }
        settle()  // the AddMatch went out before the pings: it is in force now
    }
}
