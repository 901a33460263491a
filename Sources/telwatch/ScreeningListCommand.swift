import Glibc
import Loop
import Pipeline

/// `telwatch block NUMBER…` and `telwatch allow NUMBER…`: puts numbers on a list of the rules
/// file `telwatch watch` would screen by (`--screening`, or the config file's `screening`), and
/// replaces the file by a rename, which a running telwatch follows (docs/screening.md, "From the
/// command line").
enum ScreeningListCommand {
    /// The largest rules file edited: the one the daemon reads (`WatchScreening`).
    static let rulesSizeLimit = 1 << 20

    static func run(_ list: ScreeningList, _ arguments: [String]) -> Int32 {
        let command: TelwatchCommand = list == .block ? .block : .allow
        let name = command.rawValue
        var given: [String] = []
        let parsed = WatchArguments.parseOrExit(arguments, command: name, accepting: OptionTable.accepted(by: command),
                                                help: Help.screeningList(command)) { argument, cursor in
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
        guard let configured = options.screeningFile else {
            warn("\(name): no rules file: give --screening FILE, or --config FILE whose screening = FILE names one "
                 + "(as telwatch watch is given them)")
            return ExitStatus.usage.code
        }
        let path = RulesFileWriter.target(of: configured)
        if path != configured {
            warn("\(name): \(configured) is a link: editing \(path); a running telwatch reads it again on SIGHUP")
        }
        return RulesFileWriter.whileLocked(path) { edit(path, list: list, numbers: numbers, command: name) }
    }

    /// Reads, edits and replaces the file; the caller holds the lock of its directory.
    private static func edit(_ path: String, list: ScreeningList, numbers: [[UInt8]], command: String) -> Int32 {
        var old: [UInt8] = []
        do { old = try SmallFile.read(path, limit: rulesSizeLimit) } catch {
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
        if bytes != old {
            do { try RulesFileWriter.replace(path, with: bytes) } catch {
                warn("\(command): cannot write \(path): \(error.reason); nothing was changed")
                return ExitStatus.failure.code
            }
        }
        let output = LineWriter(fd: 1)
        for line in said { output.write(line) }
        do {
            _ = try ScreeningRules.parse(bytes, path: path) { try SmallFile.read($0, limit: ScreeningRules.listSizeLimit) }
        } catch {
            warn("\(command): \(error); screening is off until it is fixed: every call rings")
            return ExitStatus.failure.code
        }
        return ExitStatus.success.code
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
