import CLoop
import Glibc

/// How a child process ended.
public enum ChildExit: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    public init(waitStatus status: Int32) {
        if status & 0x7f == 0 { self = .exited((status >> 8) & 0xff) } else { self = .signaled(status & 0x7f) }
    }

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }
}

/// A child process watched through its pidfd; it is reaped (by its exact pid) before the handler runs.
public final class ChildSource {
    public let pid: pid_t
    private let pidFD: Int32
    private var source: IOSource?
    public private(set) var exit: ChildExit?

    init(loop: EventLoop, pid: pid_t, handler: @escaping (ChildExit) -> Void) throws {
        self.pid = pid
        pidFD = cloop_pidfd_open(pid)
        guard pidFD >= 0 else { throw SystemError.last("pidfd_open") }
        source = try loop.watch(fd: pidFD, events: .readable) { [unowned self] _ in
            guard let exit = self.reap() else { return }
            handler(exit)
        }
    }

    /// Sends a signal through the pidfd, so a recycled pid can never be hit.
    @discardableResult
    public func send(_ signal: Int32) -> Bool {
        exit == nil && cloop_pidfd_send_signal(pidFD, signal) == 0
    }

    /// Sends a signal to the child's whole process group (children are spawned as group leaders).
    public func sendToGroup(_ signal: Int32) {
        guard exit == nil else { return }
        _ = kill(-pid, signal)
    }

    private func reap() -> ChildExit? {
        guard exit == nil else { return nil }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid else { return nil }
        let ended = ChildExit(waitStatus: status)
        exit = ended
        source?.cancel()
        source = nil
        return ended
    }

    deinit {
        source?.cancel()
        close(pidFD)
    }
}
