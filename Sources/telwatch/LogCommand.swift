import BGRunManager
import Glibc
import History
import Loop
import Pipeline

/// `telwatch log`: the recorded calls, newest first, as a table, JSON Lines or CSV. It reads the
/// database read-only (or, with `--mark-seen`, in one short write transaction), so it works
/// beside a running daemon.
enum LogCommand {
    /// The watch options `log` takes.
    static let acceptedOptions = OptionTable.accepted(by: .log)
    /// How long `log` waits for the daemon's write lock (a turn's commit takes well under this).
    static let busyTimeout = 2.0

    static func run(_ arguments: [String]) -> Int32 {
        let now = wallClockNow()
        var query = HistoryQuery()
        var csv = false
        var markSeen = false
        let parsed = WatchArguments.parseOrExit(arguments, command: "log", accepting: acceptedOptions, help: Help.log,
                                                service: ServiceConfiguration.find()) { argument, cursor in
            switch argument {
            case "--missed": try cursor.noValue(for: argument); query.missedOnly = true
            case "--unseen": try cursor.noValue(for: argument); query.unseenOnly = true
            case "--screened": try cursor.noValue(for: argument); query.screenedOnly = true
            case "--csv": try cursor.noValue(for: argument); csv = true
            case "--mark-seen": try cursor.noValue(for: argument); markSeen = true
            case "--since": query.since = try Parse.since(try cursor.value(for: argument), now: now)
            case "--number":
                let number = try cursor.value(for: argument)
                guard !number.isEmpty else { throw UsageError("--number needs a number (or part of one)") }
                query.number = number
            case "--limit": query.limit = try Parse.limit(try cursor.value(for: argument))
            default: return false
            }
            return true
        }
        let options: WatchOptions
        switch parsed {
        case .success(let value): options = value
        case .failure(let exit): return exit.status
        }
        if csv && options.json {
            warn("log: --json and --csv contradict each other: give one")
            return ExitStatus.usage.code
        }
        let bus = options.stateDirectory == nil ? try? BusSession(options.apiBus ?? options.bus) : nil
        let place = StatePlace.find(options, bus: bus?.connection)
        bus?.connection.close()
        guard let place else {
            warn("log: no state directory: neither $STATE_DIRECTORY, $XDG_STATE_HOME nor $HOME is set; pass --state-dir DIR")
            return ExitStatus.usage.code
        }
        place.say("log")
        let directory = place.directory
        if let why = StatePlace.notADirectory(directory) {
            warn("log: state directory \(TerminalText.field(directory)) \(why); pass the one telwatch keeps its state in "
                 + "(--state-dir)")
            return ExitStatus.failure.code
        }
        var directoryInfo = stat()
        if place.origin == .asked && stat(directory, &directoryInfo) != 0 && errno == ENOENT {
            // Asked for by name: a mistyped path is not an empty history.
            warn("log: state directory \(TerminalText.field(directory)) does not exist: no telwatch has kept its state "
                 + "there; pass the one it runs with (--state-dir, or state-dir in the config file)")
            return ExitStatus.failure.code
        }
        let path = HistoryStore.path(in: directory)
        var info = stat()
        let found = lstat(path, &info) == 0
        if (!found && errno == EACCES) || (found && access(path, R_OK) != 0 && errno == EACCES) {
            // Not "does not exist" (lstat in a directory this user may not search), nor "cannot be
            // written" (SQLite's word for a file it may not open).
            warn("log: permission denied: this user may not read \(TerminalText.field(directory)); "
                 + Access.joinHint(group: Access.group(of: directory)))
            return ExitStatus.failure.code
        }
        let rows: [HistoryRow]?
        do {
            rows = try markSeen ? listAndMark(query, path: path) : HistoryReader(path: path, busyTimeout: busyTimeout)?.calls(query)
        } catch {
            let problem = HistoryProblem(error, path: path)
            if markSeen, case .readOnly = problem {
                warn("log: --mark-seen: \(problem.what(path)); fix: " + markSeenFix(directory: directory, path: path))
            } else {
                warn("log: \(problem.what(path)); fix: \(problem.fix(path))")
            }
            return ExitStatus.failure.code
        }
        let output = LineWriter(fd: 1)
        let schema = EventSchema(redactNumbers: options.redactNumbers)
        if options.json {
            for row in rows ?? [] {
                var object = JSONObject()
                redacted(row, schema).write(into: &object)
                output.write(line: object.lineBytes)
            }
        } else if csv {
            var header = CSVRecord()
            HistoryRow().write(into: &header)
            var text = header.headerLine
            for row in rows ?? [] {
                var record = CSVRecord()
                redacted(row, schema).write(into: &record)
                text += record.line
            }
            // Whole CSV records, CRLF-ended: written as they are, with no newline added.
            output.write(raw: text)
        } else if let rows {
            guard !rows.isEmpty else {
                output.write("no calls" + (query == HistoryQuery() ? " recorded yet" : " match"))
                return ExitStatus.success.code
            }
            let format = HistoryFormat(schema: schema, now: now)
            output.write(HistoryFormat.header)
            for row in rows { output.write(format.text(row)) }
        } else {
            output.write("no calls recorded yet (\(TerminalText.escape(path)) does not exist)")
        }
        return ExitStatus.success.code
    }

    /// Marking calls seen writes the database, its WAL and the WAL's index: the service creates
    /// them writable by its group, but only a running service keeps the WAL there for a member to
    /// write into (the directory is the service's alone to create files in).
    private static func markSeenFix(directory: String, path: String) -> String {
        let group = Access.group(of: directory)
        var info = stat()
        let groupWritable = stat(path, &info) == 0 && (info.st_mode & S_IWGRP) != 0
        if getuid() != 0 && info.st_uid != getuid() {
            return groupWritable
                ? "as a member of the \(group) group, mark calls seen while the service runs (it keeps the WAL "
                    + "open for you), or run as root"
                : "run as root, or as the user the service runs as; a telwatch of this version makes "
                    + "\(TerminalText.field(path)) writable by the \(group) group when it next starts"
        }
        return "make \(TerminalText.field(path)) and its directory writable by this user"
    }

    private static func listAndMark(_ query: HistoryQuery, path: String) throws -> [HistoryRow]? {
        guard let store = try HistoryStore.openExisting(path: path, busyTimeout: busyTimeout) else { return nil }
        defer { store.close() }
        let (rows, marked) = try store.listAndMarkSeen(query)
        warn("log: marked \(marked) missed call\(marked == 1 ? "" : "s") seen")
        return rows
    }

    private static func redacted(_ row: HistoryRow, _ schema: EventSchema) -> HistoryRow {
        var copy = row
        copy.number = schema.number(row.number)
        return copy
    }
}

extension Parse {
    /// `--since 2h`, `7d` (that long ago), or a local date and time: `2026-11-29`,
    /// `2026-11-29 08:00`, `2026-11-29T08:00:30`; a trailing `Z` means UTC.
    static func since(_ text: String, now: Double) throws -> Double {
        if let ago = sinceGrammar.seconds(text) { return now - ago }
        if let moment = date(text) { return moment }
        throw UsageError("--since takes a duration \(sinceGrammar.accepted), such as 90m, 2h or 7d, or a date "
                         + "(2026-11-29, 2026-11-29 08:00), not \(quoted(text))")
    }

    /// `--since`'s durations: a unit is needed (a bare number is no date either), up to a century.
    static let sinceGrammar = DurationGrammar(floor: 0, ceiling: 36_600 * 86_400)

    private static func date(_ text: String) -> Double? {
        var rest = Substring(text)
        let utc = rest.hasSuffix("Z")
        if utc { rest = rest.dropLast() }
        let parts = rest.split(omittingEmptySubsequences: false) { $0 == " " || $0 == "T" }
        guard parts.count == 1 || parts.count == 2 else { return nil }
        let day = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        let time = parts.count == 2 ? parts[1].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) } : [0, 0]
        guard day.count == 3, (2...3).contains(time.count), let year = day[0], let month = day[1], let date = day[2],
              let hour = time[0], let minute = time[1], let second = time.count == 3 ? time[2] : 0,
              (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(date),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var calendar = tm()
        calendar.tm_year = Int32(year - 1900)
        calendar.tm_mon = Int32(month - 1)
        calendar.tm_mday = Int32(date)
        calendar.tm_hour = Int32(hour)
        calendar.tm_min = Int32(minute)
        calendar.tm_sec = Int32(second)
        calendar.tm_isdst = -1
        let seconds = utc ? timegm(&calendar) : mktime(&calendar)
        return seconds == -1 ? nil : Double(seconds)
    }

    /// `--limit N`: a positive count.
    static func limit(_ text: String) throws -> Int {
        guard let value = Int(text), value > 0 else {
            throw UsageError("--limit takes a positive number of calls, not \(quoted(text))")
        }
        return value
    }
}
