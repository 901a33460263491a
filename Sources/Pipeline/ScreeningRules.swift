/// What screening does to an incoming call (docs/screening.md).
import Contacts

/// The screening rules of one rules file and the list files it names (docs/screening.md).
public struct ScreeningRules: Sendable {
    public var allowed = NumberList()
    public var blocked: [ScreeningRuleAction: NumberList] = [:]
    /// The block actions, strongest first (`ScreeningRuleAction.strength`): a number in several
    /// lists takes the first that lists it.
    public var blockOrder: [ScreeningRuleAction] = []
    public var withheld: (action: ScreeningRuleAction, source: String)?
    public var unknown: (action: ScreeningRuleAction, source: String)?
    public var quiet: [QuietHours] = []
    public var exceptContacts = false
    /// Seconds: a number that called within this long before rings through.
    public var repeatWindow: Double?
    /// Seconds: a number called from this phone within this long rings through.
    public var calledWindow: Double?
    /// `voicemail NUMBER`: where `deflect voicemail` sends a call (checked as a deflect number).
    public var voicemail: String?
    /// `command NAME PROGRAM ARGUMENTS…`: the commands `run NAME` rules run, by name.
    public var commands: [String: ScreeningCommand] = [:]

    public init() {}

    /// Files a number under a block action, keeping `blockOrder`.
    mutating func block(_ action: ScreeningRuleAction, _ add: (inout NumberList) throws(ScreeningFileError) -> Void)
        throws(ScreeningFileError) {
        if blocked[action] == nil {
            blocked[action] = NumberList()
            let place = blockOrder.firstIndex { $0.strength > action.strength } ?? blockOrder.count
            blockOrder.insert(action, at: place)
        }
        try add(&blocked[action]!)
    }

    /// Numbers in all the lists.
    public var numberCount: Int { allowed.count + blocked.values.reduce(0) { $0 + $1.count } }
}

extension ScreeningRules {
    /// The longest entry a list line may hold: a number has at most 15 digits (E.164), with room
    /// for separators; anything longer is not a number.
    public static let longestEntry = 64
    /// The largest list file read (a million numbers fit).
    public static let listSizeLimit = 32 << 20

    /// Parses a rules file. `path` names it in errors and sources; list files are read with
    /// `readFile`, relative paths from the rules file's directory.
    public static func parse(_ bytes: [UInt8], path: String,
                             readFile: (String) throws -> [UInt8]) throws(ScreeningFileError) -> ScreeningRules {
        var rules = ScreeningRules()
        let lines = splitLines(withoutByteOrderMark(bytes))
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let source = "\(path):\(number)"
            func fail(_ reason: String) -> ScreeningFileError { ScreeningFileError(file: path, line: number, reason) }
            if let problem = hostile(raw, limit: 4096) { throw fail(problem) }
            let text = String(decoding: raw, as: UTF8.self)
            let content = text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            var words = content.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard !words.isEmpty else { continue }
            let keyword = words.removeFirst()
            switch keyword {
            case "block", "allow":
                var action = ScreeningRuleAction.reject
                var at = 0
                if keyword == "block", let given = try ruleAction(words, at: &at, rules: rules, fail: fail) {
                    guard given.action != .allow else {
                        throw fail("a block rule's action is reject, silence, ignore, deflect NUMBER or run NAME")
                    }
                    action = given
                    words.removeFirst(at)
                }
                guard !words.isEmpty else { throw fail("\(keyword) needs at least one number or prefix (+1900*)") }
                for word in words {
                    let entry = Array(word.utf8)
                    if let refusal = refusal(ofEntry: entry) { throw fail("\(quoted(word)) is \(refusal)") }
                    if keyword == "allow" { rules.allowed.add(entry, source: source) } else {
                        try rules.block(action) { list throws(ScreeningFileError) in list.add(entry, source: source) }
                    }
                }
            case "block-list", "allow-list":
                var action = ScreeningRuleAction.reject
                var at = 0
                if keyword == "block-list", words.count >= 2,
                   let given = try ruleAction(words, at: &at, rules: rules, fail: fail), given.action != .allow {
                    action = given
                    words.removeFirst(at)
                }
                guard words.count == 1 else { throw fail("\(keyword) takes one file (block-list [ACTION] FILE)") }
                let listPath = resolve(words[0], from: path)
                let listBytes: [UInt8]
                do { listBytes = try readFile(listPath) } catch {
                    throw fail("cannot read the list \(listPath): \(error)")
                }
                if keyword == "allow-list" {
                    try readList(listBytes, path: listPath, into: &rules.allowed)
                } else {
                    try rules.block(action) { list throws(ScreeningFileError) in
                        try readList(listBytes, path: listPath, into: &list)
                    }
                }
            case "withheld", "unknown":
                var at = 0
                guard let action = try ruleAction(words, at: &at, rules: rules, fail: fail), at == words.count else {
                    throw fail("\(keyword) takes one action: reject, silence, ignore, allow, deflect NUMBER or run NAME")
                }
                if keyword == "withheld" { rules.withheld = (action, source) } else { rules.unknown = (action, source) }
            case "quiet":
                rules.quiet.append(try quietHours(words, source: source, rules: rules, fail: fail))
            case "voicemail":
                guard words.count == 1 else { throw fail("voicemail takes one number (voicemail +15559876543)") }
                switch deflectNumber(words[0]) {
                case .success(let number): rules.voicemail = number
                case .failure(let refused): throw fail("voicemail: " + refused.reason)
                }
            case "command":
                guard words.count >= 2 else {
                    throw fail("command takes a name and a program with its arguments (command open-gate /usr/local/bin/open-gate)")
                }
                let name = words.removeFirst()
                guard isCommandName(name) else {
                    throw fail("\(quoted(name)) is no command name (letters, digits, - and _; at most 32)")
                }
                guard rules.commands[name] == nil else { throw fail("command \(quoted(name)) is named twice") }
                rules.commands[name] = ScreeningCommand(name: name, arguments: words)
            case "except":
                switch words.first {
                case "contacts" where words.count == 1: rules.exceptContacts = true
                case "repeat" where words.count == 2:
                    guard let window = repeatGrammar.seconds(words[1]) else {
                        throw fail("except repeat takes a duration \(repeatGrammar.accepted), such as 15m, not \(quoted(words[1]))")
                    }
                    rules.repeatWindow = window
                case "called" where words.count == 2:
                    guard let window = calledGrammar.seconds(words[1]) else {
                        throw fail("except called takes a duration \(calledGrammar.accepted), such as 30d, not \(quoted(words[1]))")
                    }
                    rules.calledWindow = window
                default:
                    throw fail("except takes contacts, repeat DURATION (such as 15m) or called DURATION (such as 30d)")
                }
            default:
                throw fail("unknown rule \(quoted(keyword)) (block, allow, block-list, allow-list, withheld, "
                           + "unknown, quiet, except, voicemail, command)")
            }
        }
        return rules
    }

    /// A list file: one number or prefix a line, `#` comments; a line that is not one (control
    /// characters, too long, not digits) refuses the whole file with its line number.
    static func readList(_ bytes: [UInt8], path: String, into list: inout NumberList) throws(ScreeningFileError) {
        let lines = splitLines(withoutByteOrderMark(bytes))
        list.reserve(lines.count)
        for (index, raw) in lines.enumerated() {
            func fail(_ reason: String) -> ScreeningFileError { ScreeningFileError(file: path, line: index + 1, reason) }
            if let problem = hostile(raw, limit: longestEntry) { throw fail(problem) }
            let line = trimmed(raw)
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            let entry = Array(line)
            if let refusal = refusal(ofEntry: entry) { throw fail(refusal) }
            list.add(entry, source: path)
        }
    }

    private static let notAnEntry = "not a number or a prefix (digits, then * for a prefix)"
    private static let everyNumber = "a prefix that matches every number (00 is read as +): "
        + "give at least a country code, such as +1900*"

    /// One entry as a list file's line would hold it (`telwatch block NUMBER`): the entry with
    /// its blanks taken out, or why a list file would refuse that line.
    public static func listEntry(_ raw: [UInt8]) -> Result<[UInt8], RefusedEntry> {
        if let problem = hostile(raw[...], limit: longestEntry, what: "a number") {
            return .failure(RefusedEntry(reason: problem))
        }
        let entry = Array(trimmed(raw[...]))
        if let refusal = refusal(ofEntry: entry) { return .failure(RefusedEntry(reason: refusal)) }
        return .success(entry.filter { $0 != 0x20 && $0 != 0x09 })
    }

    /// A number or prefix as written (`+49 171-123`, `0900*`), or nil (`refusal(ofEntry:)`).
    static func entry(_ bytes: [UInt8]) -> [UInt8]? { refusal(ofEntry: bytes) == nil ? bytes : nil }

    /// Why `bytes` is no number or prefix, or nil: an entry is `+` first, digits and the
    /// separators `-.()` and spaces, at least one digit, and `*` only last; a prefix must keep a
    /// digit once `00` is read as `+`, or it would match every caller (`+*`, `00*`).
    static func refusal(ofEntry bytes: [UInt8]) -> String? {
        var digits = 0
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "+"): if index != 0 { return notAnEntry }
            case UInt8(ascii: "*"): if index != bytes.count - 1 { return notAnEntry }
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: " "): break
            default: return notAnEntry
            }
        }
        if bytes.last == UInt8(ascii: "*"), !NumberList.canonical(bytes).contains(where: { $0 != UInt8(ascii: "+") }) {
            return everyNumber
        }
        return digits > 0 && digits <= 20 ? nil : notAnEntry
    }

    /// A UTF-8 byte-order mark at the start, which some editors write, is no part of the first line.
    static func withoutByteOrderMark(_ bytes: [UInt8]) -> [UInt8] {
        bytes.starts(with: byteOrderMark) ? Array(bytes.dropFirst(byteOrderMark.count)) : bytes
    }

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Why a line is refused before it is read, or nil.
    private static func hostile(_ line: ArraySlice<UInt8>, limit: Int, what: String = "a line") -> String? {
        if line.count > limit { return "\(what) of \(line.count) bytes (at most \(limit))" }
        if let byte = line.first(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7f }) {
            return "a control character (0x" + String(byte, radix: 16) + ")"
        }
        return nil
    }

    /// Lines split at `\n`, a `\r` before it dropped.
    private static func splitLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0
        }
    }

    private static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = line.firstIndex(where: { !blank($0) }), let last = line.lastIndex(where: { !blank($0) }) else {
            return []
        }
        return line[first...last]
    }

    private static func resolve(_ file: String, from rules: String) -> String {
        guard !file.hasPrefix("/"), let slash = rules.lastIndex(of: "/") else { return file }
        return String(rules[...slash]) + file
    }

    /// `except repeat`: a caller calling again within minutes or hours (a day at most).
    static let repeatGrammar = DurationGrammar(units: [.minutes, .hours], floor: 60, ceiling: 86_400)
    /// `except called`: a number called within hours, days or weeks (a year at most).
    static let calledGrammar = DurationGrammar(units: [.hours, .days, .weeks], floor: 3600, ceiling: 366 * 86_400)

    static func quoted(_ word: String) -> String {
        "'" + String(word.unicodeScalars.prefix(40).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" }) + "'"
    }

    static let weekdays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// `quiet 22:00-07:00 [mon-fri|sat,sun|daily] [ACTION]`.
    private static func quietHours(_ words: [String], source: String, rules: ScreeningRules,
                                   fail: (String) -> ScreeningFileError) throws(ScreeningFileError) -> QuietHours {
        let usage = "quiet takes HH:MM-HH:MM, then days (mon-fri, sat,sun, daily) and an action (default silence)"
        guard (1...4).contains(words.count) else { throw fail(usage) }
        let ends = words[0].split(separator: "-")
        guard ends.count == 2, let start = minutes(ends[0]), let end = minutes(ends[1]), start != end else {
            throw fail(usage)
        }
        var days = Set(0..<7)
        var action = ScreeningRuleAction.silence
        var index = 1
        while index < words.count {
            if let given = try ruleAction(words, at: &index, rules: rules, fail: fail) {
                action = given
            } else if let given = weekdaySet(words[index]) {
                days = given
                index += 1
            } else {
                throw fail(usage)
            }
        }
        return QuietHours(start: start, end: end, days: days, action: action, source: source)
    }

    private static func minutes(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[1].count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]),
              (0...24).contains(hours), (0..<60).contains(minutes), hours * 60 + minutes <= 1440 else { return nil }
        // 24:00 ends a window at midnight.
        return hours * 60 + minutes
    }

    private static func weekdaySet(_ word: String) -> Set<Int>? {
        if word == "daily" { return Set(0..<7) }
        var days = Set<Int>()
        for part in word.split(separator: ",") {
            let range = part.split(separator: "-")
            guard let first = range.first.flatMap({ weekdays.firstIndex(of: String($0)) }) else { return nil }
            guard range.count == 2 else {
                guard range.count == 1 else { return nil }
                days.insert(first)
                continue
            }
            guard let last = weekdays.firstIndex(of: String(range[1])) else { return nil }
            var day = first
            while true {
                days.insert(day)
                if day == last { break }
                day = (day + 1) % 7
            }
        }
        return days.isEmpty ? nil : days
    }
}
