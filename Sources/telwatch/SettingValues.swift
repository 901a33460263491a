// Imports only Pipeline (the duration grammar, shared with the screening rules), which
// fuzz/targets/config-file.swift links: it compiles this file in (see its header).
import Pipeline

/// The values of settings, as flags and the config file give them: pure functions of the text,
/// so that the fuzz target `config-file` compiles this file in.
enum Parse {
    /// Bad input quoted in an error: at most `limit` bytes of it, so a megabyte line is not echoed.
    static func quoted(_ text: String, limit: Int = 100) -> String {
        guard text.utf8.count > limit else { return "'" + text + "'" }
        return "'" + String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "…' (\(text.utf8.count) bytes)"
    }

    /// The shortest each duration may be, and why: below it a setting does nothing useful and can
    /// only flood (a heartbeat every microsecond) or defeat itself (a lease that ends every run
    /// before its lock is taken). Others: 1 ms.
    private static let durationFloors: [String: Double] = [
        "lease": 10, "heartbeat": 1, "hook-timeout": 0.1, "stop-grace": 0, "resume-grace": 1,
    ]

    /// The longest a duration setting may be: a year.
    static let durationCeiling = 366 * 86_400.0

    /// A duration setting's grammar (`DurationGrammar`): every unit, a bare number is seconds.
    static func durationGrammar(for option: String) -> DurationGrammar {
        DurationGrammar(bare: .seconds, floor: durationFloors[String(option.dropFirst(2))] ?? 0.001, ceiling: durationCeiling)
    }

    static func seconds(_ text: String, for option: String) throws -> Double {
        let grammar = durationGrammar(for: option)
        guard let seconds = grammar.seconds(text) else {
            throw UsageError("\(option) takes a duration \(grammar.accepted), such as 30, 90s, 5m or 1h, not \(quoted(text))")
        }
        return seconds
    }

    /// `history-keep`'s durations: at least a day (pruning happens at most daily), up to a century.
    static let retentionGrammar = DurationGrammar(bare: .seconds, floor: 86_400, ceiling: 36_600 * 86_400)

    /// `history-keep`: `0` keeps every call; otherwise a duration of at least a day, such as `90d`.
    static func retention(_ text: String, for option: String) throws -> Double? {
        if text == "0" { return nil }
        guard let seconds = retentionGrammar.seconds(text) else {
            throw UsageError("\(option) takes 0 (keep every call) or a duration \(retentionGrammar.accepted), "
                             + "such as 90d or 52w, not \(quoted(text))")
        }
        return seconds
    }

    /// A directory given by path: never empty, and absolute where a daemon's working directory
    /// would otherwise decide where it lands.
    static func directory(_ text: String, for option: String, absolute: Bool) throws -> String {
        guard !text.isEmpty, !absolute || text.hasPrefix("/") else {
            throw UsageError("\(option) takes \(absolute ? "an absolute" : "a") directory path, not \(quoted(text))")
        }
        return text
    }

    /// A command line of the config file or a flag, split as `sh` would (`CommandWords`).
    static func command(_ text: String, for setting: String) throws -> [String] {
        let argv: [String]
        do { argv = try CommandWords.split(text) } catch { throw UsageError("\(setting): \(error)") }
        guard !argv.isEmpty, !argv[0].isEmpty else { throw UsageError("\(setting) needs a command") }
        return argv
    }

    static func file(_ text: String, for option: String) throws -> String {
        guard !text.isEmpty else { throw UsageError("\(option) takes a file path") }
        return text
    }

    static func bool(_ text: String, for option: String) throws -> Bool {
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw UsageError("\(option) takes true or false, not \(Parse.quoted(text))")
        }
    }

    /// `--inhibit WHAT[:MODE]|none`: WHAT is logind's colon-separated list, MODE block or delay.
    static func inhibit(_ text: String) throws -> (what: String?, mode: String) {
        if text == "none" { return (nil, "block") }
        var parts = text.split(separator: ":").map(String.init)
        var mode = "block"
        if let last = parts.last, last == "block" || last == "delay" {
            mode = last
            parts.removeLast()
        }
        let known: Set<String> = ["shutdown", "sleep", "idle", "handle-power-key", "handle-suspend-key",
                                  "handle-hibernate-key", "handle-lid-switch", "handle-reboot-key"]
        guard !parts.isEmpty, parts.allSatisfy(known.contains) else {
            throw UsageError("--inhibit takes WHAT[:MODE] (WHAT from \(known.sorted().joined(separator: ", ")); "
                             + "MODE block or delay) or none, not \(Parse.quoted(text))")
        }
        return (parts.joined(separator: ":"), mode)
    }
}
