import Glibc
import Loop

/// One small record of the state directory that changes in place: open from its first write on,
/// each later write one `pwrite` at its start, padded with empty lines to the length it had, so
/// that a shorter record leaves no tail of the longer one (readers skip empty lines). No new file
/// or directory entry per write (a rename costs a ring most of a millisecond on ext4), and no
/// fsync: a record guards against telwatch being killed, which the page cache survives.
public final class RecordFile {
    public let path: String
    private var fd: Int32 = -1
    private var length = 0

    public init(path: String) {
        self.path = path
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Far above any record telwatch writes (a few hundred bytes, a few KiB of live calls).
    public static let limit = 64 << 10

    /// The record's text as last written, by anyone (takes no lock, follows no link); nil when
    /// there is none or it cannot be read.
    public static func text(_ path: String) -> String? {
        try? SmallFile.text(path, limit: limit, followSymlinks: false)
    }

    public func write(_ text: String) throws(SystemError) {
        try openIfNeeded()
        var bytes = Array(text.utf8)
        if bytes.count < length {
            bytes += repeatElement(UInt8(ascii: "\n"), count: length - bytes.count)
        }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { throw .last("write \(path)") }
        length = bytes.count
    }

    /// Empties the record, or removes what stands in its place when it was never opened (a link,
    /// not what it points to); none is no error. An open record is blanked in place, empty lines
    /// over what it held, in one `pwrite` like any write: a truncation costs ext4 a journal
    /// update, several times the write, at every run's and every call's end.
    public func clear() throws(SystemError) {
        if fd >= 0 {
            try write("")
            return
        }
        guard unlink(path) == 0 || errno == ENOENT else { throw .last("unlink \(path)") }
    }

    private func openIfNeeded() throws(SystemError) {
        guard fd < 0 else { return }
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, RunStateStore.recordMode)
        guard opened >= 0 else { throw .last("open \(path)") }
        var info = stat()
        guard fstat(opened, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(opened)
            throw SystemError(call: "open \(path)", errno: EINVAL)
        }
        // A record an older telwatch created 0600 becomes group-readable like a new one.
        if info.st_mode & 0o777 == 0o600 { _ = fchmod(opened, RunStateStore.recordMode) }
        fd = opened
        length = Int(info.st_size)
    }
}
