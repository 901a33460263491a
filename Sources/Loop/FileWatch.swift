import Glibc

/// Tells, through the loop, when a file has been written or replaced: inotify on the file's
/// directory, so that a file replaced by a rename (what editors and `cp`-then-`mv` tools do) is
/// followed as well as one written in place. Only finished writes count (`IN_CLOSE_WRITE`, a
/// rename onto the name), so a half-written file is never read. No timer, no polling: the loop
/// wakes only when the directory changes.
public final class FileWatch {
    public let path: String
    private let name: [UInt8]
    private let fd: Int32
    private var source: IOSource?
    private let onChange: () -> Void

    public init(loop: EventLoop, path: String, onChange: @escaping () -> Void) throws(SystemError) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        name = Array((slash.map { String(path[path.index(after: $0)...]) } ?? path).utf8)
        self.onChange = onChange
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw SystemError(call: "inotify_init1", errno: errno) }
        guard inotify_add_watch(fd, directory, UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)) >= 0 else {
            let failure = SystemError(call: "inotify_add_watch \(directory)", errno: errno)
            close(fd)
            throw failure
        }
        do {
            source = try loop.watch(fd: fd, events: .readable) { [weak self] _ in self?.drain() }
        } catch let error as SystemError {
            close(fd)
            throw error
        } catch {
            close(fd)
            throw SystemError(call: "epoll_ctl", errno: EINVAL)
        }
    }

    deinit {
        source?.cancel()
        close(fd)
    }

    /// Reads every queued event; the file's own name among them makes one `onChange`.
    private func drain() {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            var offset = 0
            // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes of name.
            while offset + 16 <= count {
                let (mask, length) = buffer.withUnsafeBytes {
                    ($0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                     Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let start = offset + 16
                let end = min(count, start + length)
                let bytes = buffer[start..<end].prefix { $0 != 0 }
                // Events were lost when the queue overflowed: the file may have changed.
                if bytes.elementsEqual(name) || mask & UInt32(IN_Q_OVERFLOW) != 0 { changed = true }
                offset = start + length
            }
        }
        if changed { onChange() }
    }
}
