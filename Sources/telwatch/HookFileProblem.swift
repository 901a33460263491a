import Glibc

/// What keeps a file where a hook belongs from running, as `doctor` says it: each has its own
/// fix, since `chmod +x` mends only a regular file without its execute bit.
enum HookFileProblem: Equatable {
    case notExecutable
    /// A directory, a FIFO, a socket or a device: the runner runs regular files only.
    case notAFile(String)
    /// A symbolic link to nothing.
    case danglingLink(target: String)
    /// Its `#!` line names an interpreter that is not there (or cannot be run): every run fails.
    case missingInterpreter(String)

    /// The problem of the file at `path`, or nil when it runs.
    static func of(_ path: String) -> HookFileProblem? {
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, stat(path, &info) != 0 {
            return .danglingLink(target: linkTarget(path))
        }
        guard stat(path, &info) == 0 else { return .danglingLink(target: "") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .notAFile("a directory")
        case S_IFIFO: return .notAFile("a FIFO")
        case S_IFSOCK: return .notAFile("a socket")
        default: return .notAFile("a device")
        }
        guard access(path, X_OK) == 0 else { return .notExecutable }
        if let interpreter = interpreter(of: path) {
            var target = stat()
            guard stat(interpreter, &target) == 0, target.st_mode & S_IFMT == S_IFREG, access(interpreter, X_OK) == 0 else {
                return .missingInterpreter(interpreter)
            }
        }
        return nil
    }

    /// The program of a `#!` line, or nil for a file without one (a binary).
    private static func interpreter(of path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 256)
        let count = read(fd, &head, head.count)
        guard count > 2, head[0] == UInt8(ascii: "#"), head[1] == UInt8(ascii: "!") else { return nil }
        let line = head[2..<count].prefix { $0 != UInt8(ascii: "\n") }
        let words = line.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D })
        return words.first.map { String(decoding: $0, as: UTF8.self) }
    }

    private static func linkTarget(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = readlink(path, &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }
}
