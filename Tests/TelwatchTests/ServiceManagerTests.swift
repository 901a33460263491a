import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// telwatch under a service manager: systemd's notify protocol on a socket the test owns, and
/// lines shaped for the journal when stderr is it (docs/packaging.md).
final class ServiceManagerTests: CommandTestCase {
    func testTheManagerHearsReadyOnlyOnceTheStackIsReadThenStatusPingsAndTheStop() throws {
        try startModemManager(parameters: Self.liveCalls([(.active, .incoming, number: "+15557777")]))
        let manager = try NotifySocket()
        defer { manager.close() }
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager",
                                  "--state-dir", stateDirectory],
                                 extraEnvironment: ["NOTIFY_SOCKET=" + manager.name, "WATCHDOG_USEC=400000"])
        // Pings may come first; the first message that is not one says READY=1, and the call that
        // was live before telwatch started is already in its status: the stack was read before.
        var messages: [[String]] = []
        let ready = manager.next(timeout: 15, collecting: &messages) { !$0.contains("WATCHDOG=1") }
        XCTAssertEqual(ready?.first, "READY=1", "\(messages)\n\(fixture.logs())")
        let status = ready?.first { $0.hasPrefix("STATUS=") } ?? ""
        XCTAssertTrue(status.hasPrefix("STATUS=1 call live, run ") && status.hasSuffix(" held"), status)

        XCTAssertNotNil(manager.next(timeout: 5, collecting: &messages) { $0 == ["WATCHDOG=1"] },
                        "no watchdog ping: \(messages)")
        try control("RemoteHangup", [.objectPath("/org/freedesktop/ModemManager1/Call/0")])
        XCTAssertNotNil(manager.next(timeout: 10, collecting: &messages) { $0 == ["STATUS=no call live, no run"] },
                        "the status did not follow the call's end: \(messages)")
        // Stopped while a call holds a run: the run's end must not overwrite "stopping".
        _ = try ring("+15550002")
        XCTAssertNotNil(manager.next(timeout: 10, collecting: &messages) {
            $0.first?.hasPrefix("STATUS=1 call live, run ") == true
        }, "the status did not follow the new call: \(messages)")

        watch.signal(SIGTERM)
        let stopping = manager.next(timeout: 10, collecting: &messages) { !$0.contains("WATCHDOG=1") && !$0.isEmpty }
        XCTAssertEqual(stopping?.first, "STOPPING=1", "\(messages)")
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0), watch.log())
        // "stopping" stays until the stop is done; then it is cleared, so that `systemctl status`
        // of the stopped unit does not go on saying "stopping: …".
        var afterStop: [[String]] = []
        XCTAssertNotNil(manager.next(timeout: 5, collecting: &afterStop) { $0.contains { $0.hasPrefix("STATUS=") } },
                        "the status was never cleared: \(messages)")
        XCTAssertEqual(afterStop.flatMap { $0 }.filter { $0.hasPrefix("STATUS=") }, ["STATUS="],
                       "the only status after STOPPING=1 is the empty one at the end: \(afterStop)")
        let statuses = messages.flatMap { $0 }.filter { $0.hasPrefix("STATUS=") }
        XCTAssertEqual(statuses.count, Set(statuses).count, "a status is sent only when it changes: \(statuses)")
    }

    func testWithoutAWatchdogThereAreNoPings() throws {
        try startModemManager()
        let manager = try NotifySocket()
        defer { manager.close() }
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager",
                                  "--state-dir", stateDirectory], extraEnvironment: ["NOTIFY_SOCKET=" + manager.name])
        var messages: [[String]] = []
        XCTAssertEqual(manager.next(timeout: 15, collecting: &messages) { _ in true },
                       ["READY=1", "STATUS=no call live, no run"])
        watch.signal(SIGTERM)
        XCTAssertEqual(manager.next(timeout: 10, collecting: &messages) { _ in true }?.first, "STOPPING=1")
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0), watch.log())
        XCTAssertFalse(messages.flatMap { $0 }.contains("WATCHDOG=1"), "\(messages)")
    }

    /// stderr and stdout on one file, as journald gives a service one stream for both.
    private func runWithJournal(_ arguments: [String], matching: Bool) throws -> String {
        let path = logind.directory + "/journal-\(matching)"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var status = stat()
        fstat(fd, &status)
        let stream = matching ? "\(status.st_dev):\(status.st_ino)" : "\(status.st_dev):\(status.st_ino + 1)"
        let pid = try Subprocess.spawn(["setpriv", "--pdeathsig", "KILL", "--", Self.telwatch] + arguments,
                                       environment: fixture.environment + ["JOURNAL_STREAM=" + stream],
                                       stdin: .null, stdout: .fd(fd), stderr: .fd(fd), newProcessGroup: true)
        let loop = try EventLoop()
        var exit: ChildExit?
        let child = try loop.child(pid) { exit = $0 }
        if !loop.run(until: { exit != nil }, timeout: 30) {
            kill(-pid, SIGKILL)
            XCTFail("telwatch \(arguments) did not end")
        }
        withExtendedLifetime(child) {}
        return Files.text(path) ?? ""
    }

    func testOnTheJournalLinesCarryAPriorityAndNoClockOfTheirOwn() throws {
        let unreachable = "unix:path=" + logind.directory + "/no-bus-here"
        let journal = try runWithJournal(["--bus", unreachable], matching: true)
        XCTAssertTrue(journal.hasPrefix("<3>") || journal.hasPrefix("<4>"), journal)
        XCTAssertFalse(journal.contains("telwatch: "), "the journal names the program itself: \(journal)")
        let terminal = try runWithJournal(["--bus", unreachable], matching: false)
        XCTAssertTrue(terminal.hasPrefix("telwatch: "), "another file is not the journal: \(terminal)")

        let demo = try runWithJournal(["demo", "--speed", "20"], matching: true)
        let lines = demo.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("<6>") && $0.contains("incoming") }, demo)
        let clock = try NSRegularExpression(pattern: "^(<[0-9]>)?[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} ")
        let clocked = lines.filter { clock.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil }
        XCTAssertEqual(clocked, [], "the journal stamps lines itself")
    }
}

/// A service manager's notification socket, owned by the test: an abstract datagram socket.
final class NotifySocket {
    let name = "@telwatch-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    private var fd: Int32

    init() throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8.dropFirst())
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard fd >= 0, bound == 0 else { throw SystemError.last("bind") }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// The next datagram (as its lines) that `wanted` accepts, within `timeout` (0: only those
    /// already queued); every datagram read is added to `collecting`.
    func next(timeout: Double, collecting: inout [[String]], _ wanted: ([String]) -> Bool) -> [String]? {
        let deadline = monotonicNow() + timeout
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = Int32(max(0, (deadline - monotonicNow()) * 1000).rounded(.up))
            guard poll(&poller, 1, wait) == 1 else {
                if monotonicNow() >= deadline { return nil }
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { continue }
            let lines = String(decoding: buffer.prefix(count), as: UTF8.self).split(separator: "\n").map(String.init)
            collecting.append(lines)
            if wanted(lines) { return lines }
        }
    }
}
