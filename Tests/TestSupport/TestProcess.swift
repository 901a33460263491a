import DBus
import Glibc
import Loop

/// A process a test started. It dies with the test process (PR_SET_PDEATHSIG through setpriv), and
/// `BusFixture.stop()` kills it by PID; stdout is read line by line with bounded waits.
public final class TestProcess {
    public let pid: pid_t
    public let arguments: [String]
    public let logPath: String?
    private var outputFD: Int32
    private let output: LineReader
    public private(set) var exitStatus: ChildExit?

    init(pid: pid_t, arguments: [String], outputFD: Int32, logPath: String?) {
        self.pid = pid
        self.arguments = arguments
        self.outputFD = outputFD
        self.logPath = logPath
        output = LineReader(fd: outputFD)
    }

    deinit {
        if outputFD >= 0 { close(outputFD) }
    }

    /// The next line of stdout, or nil when none arrived within `timeout` seconds (or stdout closed).
    public func readLine(timeout: Double = 10) -> String? {
        defer { closeOutputAtEnd() }
        guard case .line(let line) = output.next(timeout: timeout) else { return nil }
        return line
    }

    /// Reads lines until one satisfies `predicate`; returns it (nil on timeout). Skipped lines go to `skipped`.
    public func readLine(timeout: Double = 10, where predicate: (String) -> Bool,
                         skipped: ((String) -> Void)? = nil) -> String? {
        let deadline = monotonicNow() + timeout
        while let line = readLine(timeout: max(0, deadline - monotonicNow())) {
            if predicate(line) { return line }
            skipped?(line)
        }
        return nil
    }

    /// Everything left on stdout until it closes (or `timeout`).
    public func readToEnd(timeout: Double = 10) -> String {
        defer { closeOutputAtEnd() }
        return output.readToEnd(timeout: timeout)
    }

    /// A test may run many short commands on one fixture: each one's pipe is given back as soon
    /// as it has been read to its end, not when the fixture goes.
    private func closeOutputAtEnd() {
        guard output.isAtEnd, outputFD >= 0 else { return }
        close(outputFD)
        outputFD = -1
    }

    public var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        switch waitpid(pid, &status, WNOHANG) {
        case pid:
            exitStatus = ChildExit(waitStatus: status)
            return false
        case -1:
            return false  // already reaped elsewhere, e.g. by an EventLoop child source
        default:
            return true
        }
    }

    /// Waits for the process to end on its own, up to `timeout` seconds.
    @discardableResult
    public func wait(timeout: Double = 10) -> ChildExit? {
        guard isRunning else { return exitStatus }
        guard ProcessTable.waitForEnd(pid, timeout: timeout) else { return nil }
        _ = isRunning  // reaps it
        return exitStatus
    }

    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Records an exit status learned elsewhere (an EventLoop child source that reaped it).
    public func markExited(_ status: ChildExit) { exitStatus = status }

    /// SIGTERM, then SIGKILL after `grace` seconds; always reaps.
    public func terminate(grace: Double = 3) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if wait(timeout: grace) == nil {
            kill(pid, SIGKILL)
            wait(timeout: 5)
        }
    }

    /// What the process wrote on stderr, when it was captured to a log.
    public func log() -> String {
        logPath.flatMap(Files.text) ?? ""
    }
}
