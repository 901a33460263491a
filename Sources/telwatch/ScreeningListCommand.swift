import Glibc
import Loop
import Pipeline

/// `telwatch block NUMBER…` and `telwatch allow NUMBER…`: puts numbers on a list of the rules
/// file `telwatch watch` would screen by (`--screening`, or the config file's `screening`, or the
/// service's: `ServiceConfiguration`), and replaces the file by a rename, which a running
/// telwatch follows (docs/screening.md, "From the command line").
enum ScreeningListCommand {
    static func run(_ list: ScreeningList, _ arguments: [String]) -> Int32 {
        let command: TelwatchCommand = list == .block ? .block : .allow
        let name = command.rawValue
        var given: [String] = []
        let service = ServiceConfiguration.find()
        let parsed = WatchArguments.parseOrExit(arguments, command: name, accepting: OptionTable.accepted(by: command),
                                                help: Help.screeningList(command), service: service) { argument, cursor in
            if argument == "--" {
                given += cursor.rest()
                return true
            }
            guard !argument.hasPrefix("-") else { return false }
            given.append(argument)
            return true
        }
        let options: WatchOptions
        switch parsed {
        case .success(let value): options = value
        case .failure(let exit): return exit.status
        }
        guard !given.isEmpty else {
            warn("\(name): give at least one NUMBER (see telwatch \(name) --help)")
            return ExitStatus.usage.code
        }
        var numbers: [[UInt8]] = []
        for argument in given {
            switch ScreeningRules.listEntry(Array(argument.utf8)) {
            case .success(let number): numbers.append(number)
            case .failure(let refused):
                warn("\(name): \(Parse.quoted(argument)) is refused: \(refused.reason)")
                return ExitStatus.usage.code
            }
        }
        let configured: String
        if let file = options.screeningFile {
            configured = file
        } else if !ServiceConfiguration.isConfigGiven(arguments), case .user(let rulesFile)? = service {
            // This user's own instance: the first edit makes its rules file, and the directory.
            if let failure = makeDirectories(of: rulesFile) {
                warn("\(name): cannot write \(rulesFile): \(failure); nothing was changed")
                return ExitStatus.failure.code
            }
            configured = rulesFile
        } else {
            warn("\(name): no rules file: " + noRulesFile(ServiceConfiguration.isConfigGiven(arguments) ? nil : service))
            return ExitStatus.usage.code
        }
        let path = RulesFileWriter.target(of: configured)
        if path != configured {
            warn("\(name): \(configured) is a link: editing \(path); a running telwatch reads it again on SIGHUP")
        }
        return RulesFileWriter.whileLocked(path) { edit(path, list: list, numbers: numbers, command: name) }
    }

    /// How to name a rules file, after what was looked at.
    private static func noRulesFile(_ service: ServiceConfiguration?) -> String {
        let howTo = "give --screening FILE, or --config FILE whose screening = FILE names one (as telwatch watch is given them)"
        guard let service, case .system(let configFile) = service else { return howTo }
        var info = stat()
        guard stat(configFile, &info) == 0 else { return howTo + "; \(service.described) does not exist" }
        return "\(service.described), names none: add screening = /etc/telwatch/screening.conf to it (as the "
            + "package's does: docs/screening.md), or give --screening FILE"
    }

    /// Makes the directories above `path` that do not exist; nil, or why not.
    private static func makeDirectories(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return nil }
        let directory = String(path[..<slash])
        var info = stat()
        if stat(directory, &info) == 0 { return nil }
        if let failure = makeDirectories(of: directory) { return failure }
        guard mkdir(directory, 0o777) == 0 || errno == EEXIST else {
            return String(cString: strerror(errno)) + " (making \(directory))"
        }
        return nil
    }

    /// Reads, edits and replaces the file; the caller holds the lock of its directory.
    private static func edit(_ path: String, list: ScreeningList, numbers: [[UInt8]], command: String) -> Int32 {
        var old: [UInt8] = []
        do { old = try SmallFile.read(path, limit: WatchScreening.rulesSizeLimit) } catch {
            if case .system(let failure) = error, failure.errno == ENOENT {
                old = []
            } else {
                warn("\(command): cannot read \(path): \(error.reason)")
                return ExitStatus.failure.code
            }
        }
        var bytes = old
        var said: [String] = []
        for number in numbers {
            let change = ScreeningListEdit.put(number, on: list, in: bytes)
            bytes = change.bytes
            said.append(saying(change, number: number, list: list, path: path))
        }
        // The edit never leaves a file the daemon would not load: that would turn all screening off.
        let unusable = problem(bytes, path: path)
        if bytes != old {
            if let unusable {
                let off = problem(old, path: path) == nil ? "" : "; screening is off until it is fixed: every call rings"
                warn("\(command): \(unusable); nothing was written\(off)")
                return ExitStatus.failure.code
            }
            do { try RulesFileWriter.replace(path, with: bytes) } catch {
                warn("\(command): cannot write \(path): \(error.reason); nothing was changed")
                return ExitStatus.failure.code
            }
        }
        let output = LineWriter(fd: 1)
        for line in said { output.write(line) }
        if let unusable {
            warn("\(command): \(unusable); screening is off until it is fixed: every call rings")
            return ExitStatus.failure.code
        }
        return ExitStatus.success.code
    }

    /// Why the daemon would screen nothing by `bytes` as the file `path`, or nil.
    private static func problem(_ bytes: [UInt8], path: String) -> String? {
        if case .failure(let unusable) = WatchScreening.rules(bytes, path: path) { return unusable.text }
        return nil
    }

    /// `blocked +19005550100 in FILE`, with what else changed.
    private static func saying(_ change: ScreeningListChange, number: [UInt8], list: ScreeningList,
                               path: String) -> String {
        let shown = TerminalText.field(String(decoding: number, as: UTF8.self))
        let done = list == .block ? "blocked" : "allowed"
        let file = TerminalText.field(path)
        guard change.changed else { return "\(shown) is already \(done) in \(file): nothing written" }
        var notes: [String] = change.appended ? [] : ["already listed"]
        if !change.takenOut.isEmpty {
            notes.append("taken out of \(list.opposite.rawValue) on line\(change.takenOut.count > 1 ? "s" : "") "
                         + change.takenOut.map(String.init).joined(separator: ", "))
        }
        return "\(done) \(shown) in \(file)" + (notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")")
    }
}
