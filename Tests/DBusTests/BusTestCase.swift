import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// A private bus, a loop and a connection for each test; everything started is killed in tearDown.
class BusTestCase: XCTestCase {
    var fixture: BusFixture!
    var loop: EventLoop!
    var connection: Connection!

    override func setUpWithError() throws {
        fixture = try BusFixture()
        loop = try EventLoop()
        connection = try Connection(.address(fixture.address), loop: loop)
    }

    override func tearDown() {
        connection?.close()
        connection = nil
        loop = nil
        fixture?.stop()
        fixture = nil
    }

    /// Runs an outside tool to completion while our loop keeps serving the bus (bounded).
    func runTool(_ arguments: [String], timeout: Double = 15, file: StaticString = #filePath, line: UInt = #line)
        throws -> (exit: ChildExit?, output: String)
    {
        let process = try fixture.start(arguments)
        var exit: ChildExit?
        let child = try loop.child(process.pid) { exit = $0 }
        let finished = loop.run(until: { exit != nil }, timeout: timeout)
        _ = child
        if let exit { process.markExited(exit) }
        XCTAssertTrue(finished, "\(arguments.joined(separator: " ")) did not finish: \(process.log())", file: file, line: line)
        return (exit, process.readToEnd(timeout: 2) + (exit == .exited(0) ? "" : process.log()))
    }

    /// Runs the loop until `condition` holds; fails the test after `timeout` seconds.
    func waitFor(_ what: String, timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line,
                 _ condition: () -> Bool) {
        XCTAssertTrue(loop.run(until: condition, timeout: timeout), "timed out waiting for \(what)", file: file, line: line)
    }

    func openFDCount() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while readdir(directory) != nil { count += 1 }
        return count
    }
}
