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
    private var buffer: [UInt8] = []
    public private(set) var exitStatus: ChildExit?

    init(pid: pid_t, arguments: [String], outputFD: Int32, logPath: String?) {
        self.pid = pid
        self.arguments = arguments
        self.outputFD = outputFD
        self.logPath = logPath
    }

    deinit {
        if outputFD >= 0 { close(outputFD) }
    }

    /// The next line of stdout, or nil when none arrived within `timeout` seconds (or stdout closed).
    public func readLine(timeout: Double = 10) -> String? {
        let deadline = monotonicNow() + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            guard outputFD >= 0 else { return nil }
            let left = deadline - monotonicNow()
            guard left > 0, fill(wait: left) else { return nil }
        }
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
        let deadline = monotonicNow() + timeout
        while outputFD >= 0, monotonicNow() < deadline, fill(wait: deadline - monotonicNow()) {}
        let text = String(decoding: buffer, as: UTF8.self)
        buffer.removeAll()
        return text
    }

    private func fill(wait seconds: Double) -> Bool {
        var descriptor = pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(max(1, seconds * 1000)))
        guard ready > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(outputFD, &chunk, chunk.count)
        if count <= 0 {
            close(outputFD)
            outputFD = -1
            return false
        }
        buffer.append(contentsOf: chunk[..<count])
        return true
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
        guard let logPath, let file = fopen(logPath, "r") else { return "" }
        defer { fclose(file) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            out.append(contentsOf: chunk[..<count])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
