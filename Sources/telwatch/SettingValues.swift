// Imports nothing: fuzz/targets/config-file.swift compiles this file in (see its header).

/// A mistake in how telwatch was called: one line on stderr and exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

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
    /// before its lock is taken).
    static let durationFloors: [String: (seconds: Double, text: String)] = [
        "lease": (10, "10s"), "heartbeat": (1, "1s"), "hook-timeout": (0.1, "100ms"), "stop-grace": (0, "0"),
        "resume-grace": (1, "1s"),
    ]

    static func seconds(_ text: String, for option: String) throws -> Double {
        let floor = durationFloors[String(option.dropFirst(2))] ?? (0.001, "1ms")
        let (number, scale) = splittingUnit(text, [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)])
        guard let value = Double(number), value.isFinite, value * scale >= floor.seconds,
              value > 0 || floor.seconds == 0, value * scale <= 366 * 86_400 else {
            throw UsageError("\(option) takes a duration from \(floor.text) up to a year, such as 30, 90s, 5m or 1h, "
                             + "not \(quoted(text))")
        }
        return value * scale
    }

    /// `text` less the first of `units` it ends with, and that unit's factor (1 with none).
    private static func splittingUnit(_ text: String, _ units: [(suffix: String, factor: Double)])
        -> (number: String, scale: Double) {
        for unit in units where text.hasSuffix(unit.suffix) { return (String(text.dropLast(unit.suffix.count)), unit.factor) }
        return (text, 1)
    }

    /// `history-keep`: `0` keeps every call; otherwise a duration of at least a day (pruning
    /// happens at most daily), such as `90d` or `365d`.
    static func retention(_ text: String, for option: String) throws -> Double? {
        if text == "0" { return nil }
        let (number, scale) = splittingUnit(text, [("s", 1.0), ("m", 60.0), ("h", 3600.0), ("d", 86_400.0)])
        guard let value = Double(number), value.isFinite, value * scale >= 86_400, value * scale <= 100 * 366 * 86_400 else {
            throw UsageError("\(option) takes 0 (keep every call) or a duration of at least 1d, such as 90d or 365d, "
                             + "not \(quoted(text))")
        }
        return value * scale
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
