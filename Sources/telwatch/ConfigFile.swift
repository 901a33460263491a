// Imports nothing: fuzz/targets/config-file.swift compiles this file in (see its header).

/// The config file's text as `KEY = VALUE` entries: `#` comments and blank lines are passed
/// over, keys are the long flag names (what a key means is `WatchOptions.set`'s business).
enum ConfigFile {
    struct Entry: Equatable {
        /// The line of the file it is on, from 1.
        var line: Int
        var key: String
        var value: String
    }

    /// What makes a line no entry; `line` is the line of the file it is on, from 1.
    struct Mistake: Error, Equatable {
        var line: Int
        var reason: String
    }

    /// The file's lines: "\r\n" is one Character in Swift, so a file with CRLF line ends is split
    /// on it too.
    static func lines(of text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    }

    /// The entries in file order, up to the first mistake (then nil if there is none): the
    /// caller applies them in order and reports the mistake after them, as a reader going down
    /// the file would meet them.
    static func entries(of text: String) -> (entries: [Entry], mistake: Mistake?) {
        var entries: [Entry] = []
        // A setting given twice is a mistake (which one did the user mean?), except hooks and
        // call-scoped commands, of which there may be several.
        var firstLine: [String: Int] = [:]
        // A UTF-8 byte-order mark, which some editors write first, is no part of the first key.
        let text = text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
        for (index, rawLine) in lines(of: text).enumerated() {
            let number = index + 1
            let line = rawLine.trimmingSpaces()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                return (entries, Mistake(line: number, reason: "expected KEY = VALUE, got \(Parse.quoted(line))"))
            }
            let key = String(line[..<equals]).trimmingSpaces()
            let value = String(line[line.index(after: equals)...]).trimmingSpaces()
            let setting = ["quiet", "verbose"].contains(key) ? "verbosity" : key
            if !key.hasPrefix("hook."), !key.hasPrefix("while."), let first = firstLine[setting] {
                return (entries, Mistake(line: number, reason: "\(Parse.quoted(key)) is already set on line \(first)"))
            }
            firstLine[setting] = number
            entries.append(Entry(line: number, key: key, value: value))
        }
        return (entries, nil)
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" || first == "\r" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" { slice.removeLast() }
        return String(slice)
    }
}
