import CLoop
import Glibc

/// Signals delivered on a signalfd, on the loop thread.
public final class SignalSource {
    private let fd: Int32
    private var source: IOSource?
    private var mask = sigset_t()

    init(loop: EventLoop, signals: [Int32], handler: @escaping (Int32) -> Void) throws {
        sigemptyset(&mask)
        for number in signals { sigaddset(&mask, number) }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        fd = cloop_signalfd(&mask)
        guard fd >= 0 else { throw SystemError.last("signalfd") }
        let fd = fd
        source = try loop.watch(fd: fd, events: .readable) { _ in
            var info = signalfd_siginfo()
            while read(fd, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
                handler(Int32(info.ssi_signo))
            }
        }
    }

    /// Stops listening and unblocks the signals again.
    public func cancel() {
        guard let source else { return }
        source.cancel()
        self.source = nil
        close(fd)
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    }

    deinit { cancel() }
}
