// Fuzz target: the config file (`--config FILE`, /etc/telwatch/telwatch.conf).
// fuzz-sources: Sources/telwatch/ConfigFile.swift Sources/telwatch/SettingValues.swift Sources/telwatch/UsageError.swift Sources/telwatch/CommandWords.swift
//
// Its reading lives in the telwatch executable target, in files that import nothing, compiled in
// here: the lines as entries, then every entry's value through each value parser (what a key
// means is decided in `WatchOptions.set`, which needs the whole executable; each parser is given
// every value, so each meets every kind of text). Checked besides "no crash":
// - a mistake names a line of the file, after every entry;
// - entries are in file order, trimmed, and their keys hold no `=`;
// - the entries written out again as `KEY = VALUE` lines read back as the same entries;
// - a duration is within its floor and a year; a retention is nil or at least a day;
// - a command's words, quoted again as `sh` would, split to the same words;
// - an error message stays one short line, however long the text it quotes.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lineCount = ConfigFile.lines(of: text).count
    let (entries, mistake) = ConfigFile.entries(of: text)
    var previous = 0
    for entry in entries {
        precondition(entry.line > previous && entry.line <= lineCount, "entry on line \(entry.line) after \(previous)")
        precondition(!entry.key.contains("="), "key '\(entry.key)' holds a '='")
        precondition(entry.key == entry.key.trimmingSpaces() && entry.value == entry.value.trimmingSpaces(),
                     "entry '\(entry.key)' = '\(entry.value)' is not trimmed")
        previous = entry.line
        checkValue(entry.value)
    }
    if let mistake {
        precondition(mistake.line > previous && mistake.line <= lineCount,
                     "mistake on line \(mistake.line) of \(lineCount), after line \(previous)")
        checkMessage(mistake.reason)
    }
    let written = entries.map { "\($0.key) = \($0.value)" }.joined(separator: "\n")
    let again = ConfigFile.entries(of: written)
    precondition(again.mistake == nil, "written entries read back with a mistake: \(again.mistake!.reason)")
    precondition(again.entries.map { [$0.key, $0.value] } == entries.map { [$0.key, $0.value] },
                 "written entries read back differently")
    return 0
}

/// One option per floor (10 s, 100 ms, 0, and the 1 ms of options without one of their own).
private let durations = ["--lease", "--hook-timeout", "--stop-grace", "--mqtt-keepalive"]

private func checkValue(_ value: String) {
    for option in durations {
        do {
            let seconds = try Parse.seconds(value, for: option)
            let floor = Parse.durationGrammar(for: option).floor
            precondition(seconds.isFinite && seconds >= floor && seconds <= Parse.durationCeiling, "\(option) \(seconds)")
        } catch { checkMessage(error) }
    }
    do {
        if let kept = try Parse.retention(value, for: "--history-keep") {
            precondition(kept.isFinite && kept >= 86_400, "--history-keep \(kept)")
        }
    } catch { checkMessage(error) }
    do {
        let argv = try Parse.command(value, for: "hook.missed")
        precondition(!argv.isEmpty && !argv[0].isEmpty, "a command without a program")
        let quoted = argv.map { "'" + $0.replacing("'", with: #"'\''"#) + "'" }.joined(separator: " ")
        precondition((try? CommandWords.split(quoted)) == argv, "a command's words quoted again split differently")
    } catch { checkMessage(error) }
    do { _ = try Parse.bool(value, for: "--json") } catch { checkMessage(error) }
    do {
        let (what, mode) = try Parse.inhibit(value)
        precondition(mode == "block" || mode == "delay", "inhibit mode \(mode)")
        precondition(what.map { !$0.isEmpty } ?? (value == "none"), "inhibit what \(String(describing: what))")
    } catch { checkMessage(error) }
    for absolute in [false, true] {
        do { _ = try Parse.directory(value, for: "--state-dir", absolute: absolute) } catch { checkMessage(error) }
    }
}

/// One line, and short: `Parse.quoted` keeps at most 100 bytes of the text it quotes.
private func checkMessage(_ error: any Error) {
    checkMessage("\(error)")
}

private func checkMessage(_ message: String) {
    precondition(message.utf8.count < 1_000, "an error message of \(message.utf8.count) bytes")
}
