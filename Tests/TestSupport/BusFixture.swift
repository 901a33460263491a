import DBus
import Foundation
import Glibc
import Loop

/// Paths inside the repository, found from this source file.
public enum Repository {
    public static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/TestSupport/BusFixture.swift
        return parts.joined(separator: "/")
    }()

    public static func path(_ relative: String) -> String { root + "/" + relative }

    /// Debian's own interpreter: python3-dbus, python3-gi and python3-dbusmock are installed for it.
    public static let python = "/usr/bin/python3"
}

public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A private `dbus-daemon` (the project's permissive system-type config, socket in a fresh temp
/// directory) and every process a test starts against it. `stop()` kills them all by PID.
public final class BusFixture {
    public let directory: String
    public private(set) var address = ""
    private var daemon: TestProcess?
    public private(set) var processes: [TestProcess] = []
    private var stopped = false

    /// `config`: the daemon's configuration (the permissive one by default). `openToOtherUsers`:
    /// the socket's directory is searchable by every user, for a client started as another uid.
    /// `serviceDirectory`: D-Bus activation from the `.service` files there (the project's
    /// config has none: nothing is ever started behind a test's back).
    public init(config: String = Repository.path("Tests/Fixtures/bus.conf"), openToOtherUsers: Bool = false,
                serviceDirectory: String? = nil) throws {
        var template = Array("/tmp/telwatch-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed") }
        directory = String(cString: made)
        if openToOtherUsers { _ = chmod(directory, 0o711) }
        var config = config
        if let serviceDirectory {
            let base = Files.text(config) ?? ""
            config = directory + "/bus.conf"
            try Files.write(config, base.replacingOccurrences(
                of: "</busconfig>", with: "  <servicedir>\(serviceDirectory)</servicedir>\n</busconfig>"))
        }
        let daemon = try startProcess([
            "dbus-daemon", "--nofork", "--print-address=1",
            "--config-file=" + config,
            "--address=unix:path=" + directory + "/bus",
        ], environment: Subprocess.currentEnvironment(), name: "dbus-daemon")
        self.daemon = daemon
        guard let line = daemon.readLine(timeout: 10), line.hasPrefix("unix:") else {
            stop()
            throw FixtureError("dbus-daemon did not start: \(daemon.log())")
        }
        address = line
    }

    deinit { stop() }

    public var daemonPID: pid_t? { daemon?.pid }

    /// This process's environment with both bus variables pointing at the private bus.
    public var environment: [String] {
        Subprocess.currentEnvironment().filter {
            !$0.hasPrefix("DBUS_SYSTEM_BUS_ADDRESS=") && !$0.hasPrefix("DBUS_SESSION_BUS_ADDRESS=")
        } + ["DBUS_SYSTEM_BUS_ADDRESS=" + address, "DBUS_SESSION_BUS_ADDRESS=" + address]
    }

    /// Starts a long-running process on the private bus; stdout is readable from the returned handle.
    public func start(_ arguments: [String], extraEnvironment: [String] = [], name: String? = nil) throws -> TestProcess {
        let process = try startProcess(arguments, environment: environment + extraEnvironment,
                                       name: name ?? (arguments.first ?? "process"))
        processes.append(process)
        return process
    }

    /// Runs a short command to completion (bounded) and returns its status and stdout.
    public func run(_ arguments: [String], timeout: Double = 15) throws -> (status: ChildExit?, output: String, log: String) {
        let process = try start(arguments)
        let output = process.readToEnd(timeout: timeout)
        let status = process.wait(timeout: 2) ?? { process.terminate(); return nil }()
        return (status, output, process.log())
    }

    /// Starts a python3-dbusmock service with one of the project's templates (or dbusmock's own).
    public func startMock(template: String, parameters: String? = nil) throws -> TestProcess {
        let path = template.contains("/") ? template : Repository.path("Tests/Fixtures/dbusmock/\(template).py")
        let resolved = access(path, F_OK) == 0 ? path : template
        let name = "dbusmock-" + (resolved.split(separator: "/").last.map(String.init) ?? "")
        // dbusmock logs every call on stdout by default; nobody reads that pipe, and a full pipe would
        // block the mock, so the log goes to a file beside the others.
        let log = directory + "/" + name + "-\(processes.count)-calls.log"
        var arguments = [Repository.python, "-m", "dbusmock", "--system", "-t", resolved, "-l", log]
        if let parameters { arguments += ["-p", parameters] }
        return try start(arguments, name: name)
    }

    /// Waits until `name` has an owner on the private bus (watching NameOwnerChanged, bounded).
    public func waitForName(_ name: String, timeout: Double = 15) throws {
        let loop = try EventLoop()
        let connection = try Connection(.address(address), loop: loop)
        defer { connection.close() }
        var owned = false
        let watch = try connection.watchName(name) { event in
            if case .appeared = event { owned = true }
        }
        defer { watch.cancel() }
        guard loop.run(until: { owned }, timeout: timeout) else {
            throw FixtureError("\(name) did not appear on the test bus within \(timeout) s\n" + logs())
        }
    }

    /// Every captured stderr, for failure messages.
    public func logs() -> String {
        processes.map { "--- \($0.arguments.joined(separator: " ")) (pid \($0.pid))\n\($0.log())" }
            .joined(separator: "\n")
    }

    /// Kills every process started here (newest first) and the bus, by PID; removes the directory.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        for process in processes.reversed() { process.terminate() }
        daemon?.terminate()
        _ = try? BusFixture.removeTree(directory)
    }

    private func startProcess(_ arguments: [String], environment: [String], name: String) throws -> TestProcess {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw FixtureError("pipe failed") }
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let safeName = name.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }
        let logPath = directory + "/" + String(safeName) + "-\(processes.count).log"
        let logFD = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            close(pipeFDs[1])
            if logFD >= 0 { close(logFD) }
        }
        // setpriv makes the kernel kill the child if the test process dies before stop() runs.
        let pid = try Subprocess.spawn(
            ["setpriv", "--pdeathsig", "KILL", "--"] + arguments, environment: environment,
            stdin: .null, stdout: .fd(pipeFDs[1]), stderr: logFD >= 0 ? .fd(logFD) : .inherit,
            newProcessGroup: true)
        return TestProcess(pid: pid, arguments: arguments, outputFD: pipeFDs[0], logPath: logFD >= 0 ? logPath : nil)
    }

    static func removeTree(_ path: String) throws {
        let pid = try Subprocess.spawn(["rm", "-rf", "--", path], stdout: .null, stderr: .null)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
