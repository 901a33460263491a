import DBus
import Glibc
import Loop

/// One entry of logind's `ListInhibitors`.
public struct Inhibitor: Equatable, CustomStringConvertible {
    public var what: String
    public var who: String
    public var why: String
    public var mode: String

    public init(what: String, who: String, why: String, mode: String) {
        self.what = what
        self.who = who
        self.why = why
        self.mode = mode
    }

    public var description: String { "\(what)/\(mode) by \(who) (\(why))" }
}

/// A private bus with python3-dbusmock's own `logind` template (its `Inhibit` returns a real fd
/// and `ListInhibitors` drops the entry once every copy is closed), a loop, a connection for the
/// code under test, and a second connection that looks at logind as an outsider would.
public final class LogindHarness {
    public let fixture: BusFixture
    public let loop: EventLoop
    /// For the code under test.
    public let connection: Connection
    /// Only for looking at logind from outside.
    public let observer: Connection
    public private(set) var logind: TestProcess?

    public init(startLogind: Bool = true) throws {
        fixture = try BusFixture()
        loop = try EventLoop()
        connection = try Connection(.address(fixture.address), loop: loop)
        observer = try Connection(.address(fixture.address), loop: loop)
        if startLogind { try self.startLogind() }
    }

    /// The test's scratch directory (removed by `stop`).
    public var directory: String { fixture.directory }

    /// Starts dbusmock's own logind template (no project template has that name, so
    /// `startMock` falls back to dbusmock's) and waits until it owns its name.
    @discardableResult
    public func startLogind() throws -> TestProcess {
        let process = try fixture.startMock(template: "logind")
        logind = process
        try fixture.waitForName("org.freedesktop.login1")
        return process
    }

    /// Kills the running logind mock by its pid and reaps it.
    public func killLogind() {
        logind?.terminate()
        logind = nil
    }

    /// Makes the logind mock announce a sleep (`true`) or a resume (`false`): `PrepareForSleep(b)`
    /// from logind's own connection, through dbusmock's `EmitSignal` on `org.freedesktop.DBus.Mock`
    /// (the template has no dedicated method). The signal is on the bus when this returns.
    public func prepareForSleep(_ sleeping: Bool) throws {
        try observer.callValues("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock",
                                "EmitSignal", [.string("org.freedesktop.login1.Manager"), .string("PrepareForSleep"),
                                               .string("b"), .array(elementSignature: "v", [.variant(.bool(sleeping))])],
                                timeout: 10)
    }

    /// The same signal from a connection that does not own `org.freedesktop.login1`: a spoof, as
    /// `gdbus emit --system --object-path /org/freedesktop/login1 --signal
    /// org.freedesktop.login1.Manager.PrepareForSleep true` sends it.
    public func spoofPrepareForSleep(_ sleeping: Bool) throws {
        let result = try fixture.run(["gdbus", "emit", "--system", "--object-path", "/org/freedesktop/login1",
                                      "--signal", "org.freedesktop.login1.Manager.PrepareForSleep",
                                      sleeping ? "true" : "false"])
        guard result.status == .exited(0) else { throw FixtureError("gdbus emit: \(result.log)") }
    }

    /// `ListInhibitors` asked from the observer connection; the loop keeps serving everything else.
    public func inhibitors(timeout: Double = 5) throws -> [Inhibitor] {
        let message = try Message.methodCall(destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                                             interface: "org.freedesktop.login1.Manager", member: "ListInhibitors")
        var answer: Result<Message, DBusError>?
        observer.call(message, timeout: timeout) { answer = $0 }
        guard loop.run(until: { answer != nil }, timeout: timeout + 1), let answer else {
            throw FixtureError("ListInhibitors: no answer within \(timeout) s")
        }
        let reply = try answer.get()
        guard let list = try reply.values().first?.array else { throw FixtureError("ListInhibitors: \(reply)") }
        return list.compactMap { entry in
            guard case .structure(let fields) = entry, fields.count >= 4, let what = fields[0].string,
                  let who = fields[1].string, let why = fields[2].string, let mode = fields[3].string
            else { return nil }
            return Inhibitor(what: what, who: who, why: why, mode: mode)
        }
    }

    /// Asks `ListInhibitors` again after every answer until `condition` holds (bounded).
    /// logind (and the mock) drops an entry when it notices the descriptor closed: there is no
    /// signal for it, so asking again is the only way to see it.
    public func waitForInhibitors(timeout: Double = 5, _ condition: ([Inhibitor]) -> Bool) -> [Inhibitor]? {
        let deadline = monotonicNow() + timeout
        while monotonicNow() < deadline {
            guard let list = try? inhibitors(timeout: max(0.1, deadline - monotonicNow())) else { continue }
            if condition(list) { return list }
        }
        return nil
    }

    /// Runs the loop until `condition` holds or `timeout` passes.
    @discardableResult
    public func run(until condition: () -> Bool, timeout: Double = 10) -> Bool {
        loop.run(until: condition, timeout: timeout)
    }

    /// Kills every process the fixture started, closes both connections, removes the directory.
    public func stop() {
        connection.close()
        observer.close()
        fixture.stop()
    }
}
