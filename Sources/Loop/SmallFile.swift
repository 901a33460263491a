import CLoop
import Glibc

/// Reads a small file whole, and refuses anything else: not a regular file (a FIFO would block
/// the loop, `/dev/zero` would never end), larger than the limit, or — for files telwatch writes
/// itself — a symbolic link. Opening never blocks.
public enum SmallFile {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notRegular(String)
        case tooLarge(String, limit: Int)
        case system(SystemError)

        /// Why, without the path (for a message that names the file itself).
        public var reason: String {
            switch self {
            case .notRegular: return "not a regular file"
            case .tooLarge(_, let limit): return "larger than \(limit) bytes"
            case .system(let error): return String(cString: strerror(error.errno))
            }
        }

        public var description: String {
            switch self {
            case .notRegular(let path): return "\(path) is not a regular file"
            case .tooLarge(let path, let limit): return "\(path) is larger than \(limit) bytes"
            case .system(let error): return error.description
            }
        }
    }

    /// The file's bytes. `followSymlinks: false` refuses a link in the last component (ELOOP).
    public static func read(_ path: String, limit: Int, followSymlinks: Bool = true) throws(Failure) -> [UInt8] {
        var flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY
        if !followSymlinks { flags |= O_NOFOLLOW }
        let fd = open(path, flags)
        guard fd >= 0 else { throw .system(.last("open \(path)")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .system(.last("stat \(path)")) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegular(path) }
        guard info.st_size <= limit else { throw .tooLarge(path, limit: limit) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .system(.last("read \(path)")) }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            // The file may grow after fstat.
            guard bytes.count <= limit else { throw .tooLarge(path, limit: limit) }
        }
    }

    /// The file as UTF-8 text (invalid sequences replaced).
    public static func text(_ path: String, limit: Int, followSymlinks: Bool = true) throws(Failure) -> String {
        String(decoding: try read(path, limit: limit, followSymlinks: followSymlinks), as: UTF8.self)
    }
}
