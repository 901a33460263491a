import Glibc
import Loop

/// Bytes in, whole lines out: what a reader of a pipe or a socket keeps between reads.
public struct LineBuffer {
    private var bytes: [UInt8] = []

    public init() {}

    public mutating func append(_ chunk: ArraySlice<UInt8>) { bytes += chunk }

    /// The next whole line, without its newline; nil until one has arrived.
    public mutating func nextLine() -> String? {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = String(decoding: bytes[..<newline], as: UTF8.self)
        bytes.removeSubrange(...newline)
        return line
    }

    /// Everything held, a last line without its newline included; the buffer is then empty.
    public mutating func takeAll() -> String {
        defer { bytes.removeAll() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Reads lines from a descriptor someone else owns (a child's stdout, a control socket, a FIFO),
/// every wait bounded: a test that waits for a line that never comes fails instead of hanging.
public final class LineReader {
    public enum Next: Equatable {
        case line(String)
        /// Nothing whole arrived within the time given.
        case timedOut
        /// The writer closed its end (or the descriptor failed) with no whole line left.
        case ended
    }

    private let fd: Int32
    private var buffer = LineBuffer()
    public private(set) var isAtEnd = false

    public init(fd: Int32) { self.fd = fd }

    public func next(timeout: Double) -> Next {
        let deadline = monotonicNow() + timeout
        while true {
            if let line = buffer.nextLine() { return .line(line) }
            if isAtEnd { return .ended }
            let left = deadline - monotonicNow()
            guard left > 0, fill(wait: left) else { return isAtEnd ? .ended : .timedOut }
        }
    }

    /// Everything until the writer closes its end (or `timeout`), a last partial line included.
    public func readToEnd(timeout: Double) -> String {
        let deadline = monotonicNow() + timeout
        while !isAtEnd, monotonicNow() < deadline, fill(wait: deadline - monotonicNow()) {}
        return buffer.takeAll()
    }

    /// One read once the descriptor is readable within `seconds`; false on timeout or at the end.
    private func fill(wait seconds: Double) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(max(1, seconds * 1000)))
        if ready < 0 && errno == EINTR { return true }
        guard ready > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = read(fd, &chunk, chunk.count)
        if count > 0 {
            buffer.append(chunk[..<count])
            return true
        }
        // A non-blocking descriptor may have nothing after all; anything else is the end.
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
        isAtEnd = true
        return false
    }
}
