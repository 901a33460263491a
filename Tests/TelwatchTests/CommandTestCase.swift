import CallMonitor
import DBus
import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// The `telwatch` binary run as a user runs it, against a private bus with the project's fakes
/// (dbusmock templates, dbusmock's own logind). Lines are read from its stdout as they come.
class CommandTestCase: XCTestCase {
    var logind: LogindHarness!
    var fixture: BusFixture { logind.fixture }
    var stateDirectory: String { logind.directory + "/state" }

    override func setUpWithError() throws {
        logind = try LogindHarness()
    }

    override func tearDown() {
        logind?.stop()
        logind = nil
    }

    static var telwatch: String { BuildProducts.path("telwatch") }

    /// Starts `telwatch ARGS` on the private bus.
    func telwatch(_ arguments: [String], extraEnvironment: [String] = []) throws -> TestProcess {
        try fixture.start([Self.telwatch] + arguments, extraEnvironment: extraEnvironment, name: "telwatch")
    }

    /// `telwatch watch --json` on the private bus, waited for until it has synced.
    func startWatch(_ extra: [String] = [], backend: String = "modemmanager", file: StaticString = #filePath,
                    line: UInt = #line) throws -> TestProcess {
        let process = try telwatch(["--bus", fixture.address, "--json", "--backend", backend,
                                    "--state-dir", stateDirectory] + extra)
        XCTAssertNotNil(nextEvent(process, "ready", timeout: 15), "telwatch never became ready:\n\(process.log())",
                        file: file, line: line)
        return process
    }

    /// Runs a short command to completion (bounded).
    func runToEnd(_ arguments: [String], timeout: Double = 20) throws -> (status: ChildExit?, output: String, errors: String) {
        let process = try telwatch(arguments)
        let output = process.readToEnd(timeout: timeout)
        let status = process.wait(timeout: 5)
        return (status, output, process.log())
    }

    /// The next JSON line whose event is `event` (others are collected in `seen`).
    @discardableResult
    func nextEvent(_ process: TestProcess, _ event: String, timeout: Double = 10,
                   seen: inout [[String: Any]]) -> [String: Any]? {
        let deadline = monotonicNow() + timeout
        while let line = process.readLine(timeout: max(0, deadline - monotonicNow())) {
            guard let object = JSONLine.object(line) else {
                XCTFail("not a JSON object: \(line)")
                continue
            }
            seen.append(object)
            if object["event"] as? String == event { return object }
        }
        return nil
    }

    @discardableResult
    func nextEvent(_ process: TestProcess, _ event: String, timeout: Double = 10) -> [String: Any]? {
        var seen: [[String: Any]] = []
        return nextEvent(process, event, timeout: timeout, seen: &seen)
    }

    // MARK: The fake ModemManager

    static let mmRoot = "/org/freedesktop/ModemManager1"
    static let modem0 = "/org/freedesktop/ModemManager1/Modem/0"

    @discardableResult
    func startModemManager(parameters: String? = nil) throws -> TestProcess {
        let process = try fixture.startMock(template: "modemmanager", parameters: parameters)
        try fixture.waitForName("org.freedesktop.ModemManager1")
        return process
    }

    /// One of the fake's control methods (on `org.freedesktop.DBus.Mock`), returning its reply's body.
    @discardableResult
    func control(_ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        try mm(Self.mmRoot, "org.freedesktop.DBus.Mock", member, arguments)
    }

    /// A method of the fake ModemManager, returning its reply's body.
    @discardableResult
    func mm(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        try logind.observer.callValues("org.freedesktop.ModemManager1", path, interface, member, arguments, timeout: 10)
    }

    func ring(_ number: String) throws -> String {
        try control("Ring", [.objectPath(try ObjectPath(Self.modem0)), .string(number)]).first?.objectPath?.rawValue ?? ""
    }

    /// Moves a call of the fake as the daemon would: `StateChanged`, then `PropertiesChanged`.
    func setState(_ call: String, _ state: ModemManagerCallState, reason: ModemManagerCallStateReason) throws {
        try control("SetState", [.objectPath(try ObjectPath(call)), .int32(state.rawValue),
                                  .uint32(UInt32(reason.rawValue))])
    }

    /// A hooks directory whose `event` hook writes `line` (shell words, e.g. `"$TELWATCH_NUMBER"`)
    /// into a FIFO, then runs `more`: the test wakes when the hook writes instead of polling a
    /// file. Returns the directory and the FIFO's reading end (the caller closes it).
    func recordingHook(_ event: String, printing line: String, more: String = "") throws -> (directory: String, reader: Int32) {
        let hooks = logind.directory + "/hooks"
        let record = logind.directory + "/hook-record"
        mkdir(hooks, 0o755)
        XCTAssertEqual(mkfifo(record, 0o600), 0)
        let reader = open(record, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try Files.script(hooks + "/" + event, "printf '%s\\n' \"\(line)\" >> \"\(record)\"\n" + more)
        return (hooks, reader)
    }

    /// The fake's start-up parameters for calls already in a state when telwatch starts.
    static func liveCalls(_ calls: [(ModemManagerCallState, ModemManagerCallDirection, number: String)]) -> String {
        let entries = calls.map { state, direction, number in
            #"{"state": \#(state.rawValue), "direction": \#(direction.rawValue), "number": "\#(number)"}"#
        }
        return #"{"calls": [\#(entries.joined(separator: ", "))]}"#
    }
}
