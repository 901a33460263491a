import CSQLite
import Glibc
import SQLite

/// What can be wrong with the history database, in the words the daemon, `telwatch log` and
/// `telwatch doctor` all use. Only a damaged file and a newer schema are permanent: history
/// then stays off until the next start; everything else is tried again later.
public enum HistoryProblem: Error, Equatable, Sendable {
    /// Another process holds a lock on it longer than telwatch waits.
    case locked
    /// The file, its directory or its filesystem cannot be written.
    case readOnly(String)
    /// No room on the filesystem (or a file size limit).
    case full
    /// Not a database, or a damaged one.
    case damaged(String)
    /// Written by a newer telwatch: `found` is its `user_version`, `known` this telwatch's.
    case newerSchema(Int, known: Int)
    /// It cannot be opened or read for another reason (a link in its place, an I/O error).
    case unavailable(String)

    public init(_ error: Error) {
        if let problem = error as? HistoryProblem {
            self = problem
        } else if let error = error as? SQLiteError {
            self = HistoryProblem(error)
        } else {
            self = .unavailable("\(error)")
        }
    }

    public init(_ error: SQLiteError) {
        switch error.primary {
        case SQLITE_BUSY, SQLITE_LOCKED: self = .locked
        case SQLITE_READONLY: self = .readOnly(error.message)
        case SQLITE_FULL: self = .full
        case SQLITE_CORRUPT, SQLITE_NOTADB: self = .damaged(error.message)
        case SQLITE_PERM, SQLITE_AUTH: self = .readOnly(error.message)
        default:
            switch error.systemErrno {
            case ENOSPC, EDQUOT, EFBIG: self = .full
            case EACCES, EPERM, EROFS: self = .readOnly(String(cString: strerror(error.systemErrno)))
            default:
                let why = error.systemErrno == 0 ? error.message
                    : error.message + " (" + String(cString: strerror(error.systemErrno)) + ")"
                self = .unavailable(why)
            }
        }
    }

    /// What `error` means for the database at `path`. SQLite reports a write that failed for
    /// want of room without its errno when that was not ENOSPC (EFBIG at a file size limit,
    /// EDQUOT): the filesystem and the limit then tell whether there was room.
    public init(_ error: Error, path: String) {
        self.init(error)
        guard let error = error as? SQLiteError, error.code == CSQLITE_IOERR_WRITE, error.systemErrno == 0 else { return }
        var limit = rlimit()
        var filesystem = statvfs()
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max {
            self = .full
        } else if statvfs(directory.isEmpty ? "/" : directory, &filesystem) == 0,
                  UInt64(filesystem.f_bavail) * UInt64(filesystem.f_frsize) < HistoryProblem.nearlyFull {
            self = .full
        }
    }

    /// Whether `path` (or, when it does not exist, its directory) is on a file system mounted
    /// read-only: no `chown` or `chmod` helps there.
    public static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var filesystem = statvfs()
        if statvfs(path, &filesystem) != 0 {
            let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            guard statvfs(directory.isEmpty ? "/" : directory, &filesystem) == 0 else { return false }
        }
        return filesystem.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Free space below which a failed write is taken for a full disk.
    public static let nearlyFull: UInt64 = 1 << 20

    /// Not a database, or a damaged one: the daemon moves it aside and starts a new one.
    public var isDamage: Bool {
        if case .damaged = self { return true }
        return false
    }

    /// History stays off until telwatch starts again.
    public var isPermanent: Bool {
        switch self {
        case .damaged, .newerSchema: return true
        default: return false
        }
    }

    /// `PATH is …`: what is wrong, one clause.
    public func what(_ path: String) -> String {
        switch self {
        case .locked: return "\(path) is locked by another program"
        case .readOnly(let why): return "\(path) cannot be written (\(why))"
        case .full: return "there is no room left for \(path) (a full disk or a file size limit)"
        case .damaged(let why): return "\(path) is damaged (\(why))"
        case .newerSchema(let found, let known):
            return "\(path) was written by a newer telwatch (schema \(found); this one knows \(known))"
        case .unavailable(let why): return "\(path) cannot be used (\(why))"
        }
    }

    /// What to do about it.
    public func fix(_ path: String) -> String {
        switch self {
        case .locked:
            return "close the program that holds it (fuser \(path)); telwatch writes the calls it kept once it is free"
        case .readOnly:
            if HistoryProblem.isOnReadOnlyFileSystem(path) {
                return "the file system of \(path) is mounted read-only: remount it read-write (mount -o remount,rw), "
                    + "or give telwatch a state directory on one that is (--state-dir)"
            }
            return "make \(path) and its directory writable by the user telwatch runs as (chown), "
                + "on a filesystem mounted read-write"
        case .full: return "free some space on the filesystem of \(path), or raise the file size limit (ulimit -f)"
        case .damaged:
            // A WAL left beside a new database of the same name would be replayed into it.
            return "move it away with its WAL (mv \(path) \(path).broken; mv \(path)-wal \(path).broken-wal, if there is "
                + "one); telwatch starts a new history at its next start"
        case .newerSchema:
            return "run the telwatch that wrote it, or move it away with its WAL to start a new history"
        case .unavailable: return "check \(path) and its directory (a regular file, readable and writable)"
        }
    }
}
