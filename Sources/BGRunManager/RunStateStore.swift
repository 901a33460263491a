import DBus
import Glibc
import Loop
import Processes

/// The state directory of one telwatch instance: the live run's record (`current-run`), the last
/// sleep and resume (`last-sleep`), the live calls (`live-calls`, written by whoever knows calls)
/// and an instance lock (`instance.lock`, held with flock for the
/// life of the process). The kernel
/// drops the flock when the process dies however it dies, so a record found next to a free lock
/// belongs to a dead telwatch, with no guessing from pids that may have been reused.
public final class RunStateStore {
    public static let recordName = "current-run"
    public static let sleepRecordName = "last-sleep"
    public static let instanceLockName = "instance.lock"
    public static let liveCallsName = "live-calls"

    public let directory: String
    private var lockFD: Int32

    /// `$STATE_DIRECTORY` (set by systemd's `StateDirectory=`; the first of a colon-separated list),
    /// else `$XDG_STATE_HOME/telwatch`, else `~/.local/state/telwatch`.
    public static func defaultDirectory(environment: [String] = Subprocess.currentEnvironment()) -> String? {
        func value(_ name: String) -> String? {
            let prefix = name + "="
            guard let entry = environment.last(where: { $0.hasPrefix(prefix) }) else { return nil }
            let value = String(entry.dropFirst(prefix.count))
            return value.isEmpty ? nil : value
        }
        if let systemd = value("STATE_DIRECTORY")?.split(separator: ":").first { return String(systemd) }
        if let xdg = value("XDG_STATE_HOME"), xdg.hasPrefix("/") { return xdg + "/telwatch" }
        if let home = value("HOME") { return home + "/.local/state/telwatch" }
        return nil
    }

    /// The live run recorded in `directory`, if any (takes no lock); `look` tells why there is none.
    public static func read(directory: String) -> RunRecord? {
        if case .record(let record) = look(directory: directory) { return record }
        return nil
    }

    /// What stands where the run record belongs (for `telwatch status`; takes no lock): a record,
    /// none, one this user may not read (the directory and the records are group-readable, 0750
    /// and 0640, for the service's group), or something that is no record, which is no "none".
    public static func look(directory: String) -> RecordLook {
        let path = directory + "/" + recordName
        do {
            guard let text = try readRecord(path) else { return .none }
            if let record = RunRecord(encoded: text) { return .record(record) }
            // Emptied when its run ended: no run.
            if text.allSatisfy(\.isNewline) { return .none }
            // Caught in the middle of an overwrite (see `write`): the next look sees it whole.
            guard let again = try readRecord(path) else { return .none }
            if let record = RunRecord(encoded: again) { return .record(record) }
            return again.allSatisfy(\.isNewline) ? .none : .unusable(path: path, reason: "not a run record")
        } catch .system(let error) where error.errno == EACCES {
            return access(directory, X_OK) != 0 ? .unreadable(directory) : .unreadable(path)
        } catch {
            return .unusable(path: path, reason: error.reason)
        }
    }

    /// The last sleep recorded in `directory`, if any (for `status` and `doctor`; takes no lock).
    /// One that cannot be read counts as none: it is a remembrance of the last sleep, and the next
    /// sleep writes it anew (the daemon says if it cannot).
    public static func readSleep(directory: String) -> SleepRecord? {
        do {
            return try readRecord(directory + "/" + sleepRecordName).flatMap(SleepRecord.init(encoded:))
        } catch {
            return nil
        }
    }

    /// Records are telwatch's own small files: never through a link, never anything but a file.
    /// Nil when there is none.
    private static func readRecord(_ path: String) throws(SmallFile.Failure) -> String? {
        do {
            return try SmallFile.text(path, limit: recordLimit, followSymlinks: false)
        } catch .system(let error) where error.errno == ENOENT {
            return nil
        }
    }

    /// Records are readable by the service's group (`telwatch status` for its members), written by
    /// telwatch alone.
    static let recordMode: mode_t = 0o640

    static let recordLimit = RecordFile.limit

    /// Creates the directory (mode 0750: the service's group may read it) if needed and takes the instance lock.
    public init(directory: String) throws {
        self.directory = directory
        try RunStateStore.makeDirectories(directory)
        let path = directory + "/" + RunStateStore.instanceLockName
        lockFD = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        if lockFD < 0 && (errno == EROFS || errno == EACCES) {
            // A read-only file system (or a directory this user may not write): the lock an
            // earlier start left is taken through a read-only descriptor all the same, so the
            // history keeps its calls and writes them once it can (flock needs no write access).
            let code = errno
            lockFD = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            if lockFD < 0 { errno = code }
        }
        guard lockFD >= 0 else { throw SystemError.last("open \(path)") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(lockFD)
            if code == EWOULDBLOCK { throw RunError.stateDirectoryInUse(directory) }
            throw SystemError(call: "flock \(path)", errno: code)
        }
    }

    deinit {
        close(lockFD)
    }

    /// The run record: later writes overwrite it in place (`RecordFile`).
    private lazy var record = RecordFile(path: recordPath)

    private var recordPath: String { directory + "/" + RunStateStore.recordName }

    /// The calls live at the end of the last turn, as `live-calls` keeps them for the next telwatch
    /// (docs/modem-stacks.md §1.8); what they are is the caller's: the run manager knows no calls.
    public private(set) lazy var liveCallsRecord = RecordFile(path: directory + "/" + RunStateStore.liveCallsName)

    /// What stands where the run record belongs.
    public enum RecordCheck: Equatable {
        case absent
        case record(RunRecord)
        /// Something that is not a usable record; `removable` when removing it is safe (a
        /// garbled or oversized file, a symbolic link) rather than someone else's (a directory,
        /// a FIFO, a device).
        case unusable(String, removable: Bool)
    }

    /// Looks at the record's place without following a link, blocking, or reading past a small bound.
    public func checkRecord() -> RecordCheck {
        do {
            let text = try SmallFile.text(recordPath, limit: RunStateStore.recordLimit, followSymlinks: false)
            // Emptied when a run ended: no run.
            if text.allSatisfy(\.isNewline) { return .absent }
            guard let record = RunRecord(encoded: text) else {
                return .unusable("an unreadable run record", removable: true)
            }
            return .record(record)
        } catch .system(let error) where error.errno == ENOENT {
            return .absent
        } catch .system(let error) where error.errno == ELOOP {
            return .unusable("a symbolic link in place of the run record", removable: true)
        } catch .notRegular {
            return .unusable("\(recordPath) is not a regular file", removable: false)
        } catch .tooLarge(_, let limit) {
            return .unusable("a run record larger than \(limit) bytes", removable: true)
        } catch {
            return .unusable("\(error)", removable: false)
        }
    }

    public func read() -> RunRecord? { RunStateStore.read(directory: directory) }

    /// Overwrites the record in place (`RecordFile`). `telwatch status` reading at the very moment
    /// of a write may see a mix of the two and say so once; it reads again. After a power loss
    /// there is no run left to clean up.
    public func write(_ record: RunRecord) throws {
        try self.record.write(record.encoded)
    }

    public func readSleep() -> SleepRecord? { RunStateStore.readSleep(directory: directory) }

    /// Replaces the sleep record atomically (temp file + rename). Written as the system goes to
    /// sleep, so it is in the page cache before the sleep (suspend-to-RAM keeps it).
    public func writeSleep(_ record: SleepRecord) throws {
        try replace(RunStateStore.sleepRecordName, with: record.encoded)
    }

    private func replace(_ name: String, with text: String) throws {
        let path = directory + "/" + name
        let temporary = directory + "/." + name + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, RunStateStore.recordMode)
        guard fd >= 0 else { throw SystemError.last("open \(temporary)") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let writeError = errno
        close(fd)
        guard written == bytes.count else {
            unlink(temporary)
            throw SystemError(call: "write \(temporary)", errno: writeError)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw SystemError(call: "rename \(temporary)", errno: code)
        }
    }

    /// Removes the record (a link in its place, not what it points to); none is no error.
    /// Once telwatch has written the record, emptying it is enough (and cheaper than a directory
    /// change per run): an empty record is no run.
    public func remove() throws(SystemError) {
        try record.clear()
    }

    private static func makeDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o750) != 0 && errno != EEXIST { throw SystemError.last("mkdir \(prefix)") }
        }
    }
}
