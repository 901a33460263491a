import Glibc

/// Whether an output descriptor is systemd's journal. journald gives a service's stdout and stderr
/// a stream socket and names it in `JOURNAL_STREAM` (`device:inode`, systemd.exec(5)); checking
/// the descriptor itself (not just the variable) keeps a redirected `telwatch 2>file` started from
/// a service's shell plain text. On the journal a line starts with its syslog priority (`<4>`,
/// sd-daemon(3)) and carries no clock of its own: the journal stamps every line already.
enum JournalStream {
    /// stderr is the journal: warnings carry a priority and no `telwatch: ` (the journal names the program).
    static let isStderr = matches(fd: 2)
    /// stdout is the journal: the text event stream drops its clock.
    static let isStdout = matches(fd: 1)

    static func matches(fd: Int32, variable: String? = getenv("JOURNAL_STREAM").map { String(cString: $0) }) -> Bool {
        guard let variable else { return false }
        let parts = variable.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// `line` as the journal wants it: its priority first, and without the `HH:MM:SS.mmm ` clock
    /// that text lines start with.
    static func line(_ line: String, priority: JournalPriority) -> String {
        "<\(priority.rawValue)>" + withoutClock(line)
    }

    private static func withoutClock(_ line: String) -> String {
        let bytes = Array(line.utf8.prefix(13))
        let digits = [0, 1, 3, 4, 6, 7, 9, 10, 11]
        guard bytes.count == 13, digits.allSatisfy({ (48...57).contains(bytes[$0]) }), bytes[2] == 58, bytes[5] == 58,
              bytes[8] == 46, bytes[12] == 32 else { return line }
        return String(line.dropFirst(13))
    }
}

/// syslog(3)'s priorities, as the journal reads them from a line's `<N>` prefix.
enum JournalPriority: Int {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
}
