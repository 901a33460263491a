import Glibc

/// Replaces a rules file so that no reader ever sees half of it: a temporary file in the same
/// directory with the old file's mode (and, as root, owner), synced, renamed over the old one,
/// and the directory synced.
enum RulesFileWriter {
    struct Failure: Error {
        var reason: String
    }

    /// The file a path names: a symbolic link's target, so a rename replaces the file, not the link.
    static func target(of path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(path, nil) else {
            return path
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Runs `body` holding an exclusive lock on the file's directory, so that edits made at the
    /// same time (two `telwatch block`s) follow each other instead of one undoing the other. A
    /// directory that cannot be opened is not locked: the write then says what is wrong.
    static func whileLocked<Result>(_ path: String, _ body: () -> Result) -> Result {
        let fd = open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return body() }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        return body()
    }

    static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        var old = stat()
        let exists = stat(path, &old) == 0
        if exists && access(path, W_OK) != 0 { throw Failure(reason: reason(errno)) }
        let directory = directory(of: path)
        let base = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        var template = Array((directory + "/." + base + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            let code = errno
            throw Failure(reason: code == EACCES || code == EROFS
                          ? reason(code) + " (this user may not create files in \(directory))" : reason(code))
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        do throws(Failure) {
            defer { close(fd) }
            if exists {
                if geteuid() == 0 { _ = fchown(fd, old.st_uid, old.st_gid) }
                guard fchmod(fd, old.st_mode & 0o7777) == 0 else { throw Failure(reason: reason(errno)) }
            } else {
                let mask = umask(0)
                umask(mask)
                guard fchmod(fd, 0o666 & ~mask) == 0 else { throw Failure(reason: reason(errno)) }
            }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw Failure(reason: reason(errno)) }
                offset += written
            }
            guard fsync(fd) == 0 else { throw Failure(reason: reason(errno)) }
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(reason: reason(code))
        }
        // The rename itself lasts once the directory is synced.
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
