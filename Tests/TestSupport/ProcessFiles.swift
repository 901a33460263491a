import CLoop
import DBus
import Glibc
import Loop

/// Small file and process-table helpers for tests that look at what children did.
public enum Files {
    public static func write(_ path: String, _ text: String, mode: mode_t = 0o644) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FixtureError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw FixtureError("write \(path) failed")
        }
        _ = fchmod(fd, mode)
    }

    /// An executable `/bin/sh` script with `body` after the shebang line.
    public static func script(_ path: String, _ body: String) throws {
        try write(path, "#!/bin/sh\n" + body + "\n", mode: 0o755)
    }

    public static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw FixtureError("mkdir \(path) failed") }
    }

    public static func bytes(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            out += chunk[..<count]
        }
        return out
    }

    public static func text(_ path: String) -> String? { bytes(path).map { String(decoding: $0, as: UTF8.self) } }

    /// Waits (bounded) until `condition` holds of the file at `path`, woken by inotify on its
    /// directory (a change, a removal) rather than by polling. True when it held.
    public static func waitUntil(_ path: String, timeout: Double, _ condition: () -> Bool) -> Bool {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let notify = inotify_init1(Int32(IN_CLOEXEC))
        guard notify >= 0 else { return condition() }
        defer { close(notify) }
        // Watched before the first look: a change between the look and the wait still wakes it.
        let events = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE)
        guard inotify_add_watch(notify, directory.isEmpty ? "/" : directory, events) >= 0 else { return condition() }
        let deadline = monotonicNow() + timeout
        while !condition() {
            let left = deadline - monotonicNow()
            guard left > 0 else { return false }
            var descriptor = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, Int32(max(1, left * 1000))) > 0 {
                var drained = [UInt8](repeating: 0, count: 4096)
                _ = read(notify, &drained, drained.count)
            }
        }
        return true
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The names in a directory, without `.` and `..` (none if it cannot be read).
    public static func names(in path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What `/proc/self/fd/N` points to, e.g. `pipe:[1234]`.
    public static func descriptorTarget(_ fd: Int32) -> String? { linkTarget("/proc/self/fd/\(fd)") }

    public static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `KEY=value` entries of an `env -0` dump, as a dictionary.
    public static func environmentDump(_ path: String) -> [String: String]? {
        guard let bytes = bytes(path) else { return nil }
        var out: [String: String] = [:]
        for entry in bytes.split(separator: 0) {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            out[String(decoding: entry[..<equals], as: UTF8.self)] =
                String(decoding: entry[entry.index(after: equals)...], as: UTF8.self)
        }
        return out
    }
}

public enum ProcessTable {
    /// Processes (zombies excluded: they hold nothing) whose process group is `group`.
    public static func liveMembers(ofGroup group: pid_t) -> [pid_t] {
        Files.names(in: "/proc").compactMap { name in
            guard let pid = pid_t(name), let stat = status(pid), stat.group == group, stat.state != "Z" else { return nil }
            return pid
        }
    }

    /// Waits (bounded) until `pid` has terminated — any process, not only our child — through a
    /// pidfd, which becomes readable at its end. True when it ended (or was already gone).
    public static func waitForEnd(_ pid: pid_t, timeout: Double) -> Bool {
        let fd = cloop_pidfd_open(pid)
        guard fd >= 0 else { return !isAlive(pid) }
        defer { close(fd) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = monotonicNow() + timeout
        while true {
            let left = deadline - monotonicNow()
            if left <= 0 { return false }
            let ready = poll(&descriptor, 1, Int32(max(1, left * 1000)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return !isAlive(pid) }
        }
    }

    /// Runs `loop` until `pid` has terminated (bounded), for a process whose end depends on the
    /// loop turning (a timer of the code under test kills it): the process's pidfd is in the loop,
    /// so its end wakes it. True when it ended.
    public static func runLoop(_ loop: EventLoop, untilEndOf pid: pid_t, timeout: Double) -> Bool {
        let fd = cloop_pidfd_open(pid)
        guard fd >= 0 else { return !isAlive(pid) }
        defer { close(fd) }
        var ended = false
        guard let source = try? loop.watch(fd: fd, events: .readable, { _ in ended = true }) else { return false }
        defer { source.cancel() }
        return loop.run(until: { ended }, timeout: timeout)
    }

    /// Whether `pid` exists and is not a zombie.
    public static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = status(pid) else { return false }
        return stat.state != "Z"
    }

    /// State letter and process group from `/proc/PID/stat` (after the command name, which may hold anything).
    private static func status(_ pid: pid_t) -> (state: Character, group: pid_t)? {
        guard let text = Files.text("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 3, let state = fields[0].first, let group = pid_t(fields[2]) else { return nil }
        return (state, group)
    }
}

/// A pipe whose read end the loop watches: a child writes lines to `writeFD` (as its stdout)
/// and the test waits for them as events, with no polling of files.
public final class LoopPipe {
    public let writeFD: Int32
    private let readFD: Int32
    private var source: IOSource?
    private var buffer = LineBuffer()
    public private(set) var lines: [String] = []

    public init(loop: EventLoop) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw FixtureError("pipe failed") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        readFD = fds[0]
        writeFD = fds[1]
        source = try loop.watch(fd: readFD, events: .readable) { [unowned self] _ in self.drain() }
    }

    deinit {
        source?.cancel()
        close(readFD)
        close(writeFD)
    }

    private func drain() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(readFD, &chunk, chunk.count)
            if count <= 0 {
                // End of file: every writer closed. Stop watching, or epoll reports it forever.
                if count == 0 { source?.cancel() }
                break
            }
            buffer.append(chunk[..<count])
        }
        while let line = buffer.nextLine() { lines.append(line) }
    }
}

public enum BuildProducts {
    /// An executable built next to the running test bundle (`swift build` builds every product).
    public static func path(_ name: String) -> String {
        let exe = Files.linkTarget("/proc/self/exe") ?? ""
        let directory = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return directory + "/" + name
    }
}
