/// Strings from the bus end up on stdout and in hook environments: a value no real number or
/// name comes close to is an error, not data.
public enum CallText {
    static let maxBytes = 256

    static func fits(_ text: String) -> Bool { text.utf8.count <= maxBytes }

    /// What ends a number or name too long to keep whole (docs/modem-stacks.md §1.6).
    public static let cutMark = "…"

    /// A number or name longer than `maxBytes`: its first whole characters, then `cutMark`, in
    /// `maxBytes` at most. What was read is kept and shown for what it is: not the caller's number,
    /// and never "no number" (which a ModemManager call ringing long enough means a withheld caller).
    static func cut(_ text: String) -> String {
        let room = maxBytes - cutMark.utf8.count
        var kept = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            guard used + size <= room else { break }
            kept.unicodeScalars.append(scalar)
            used += size
        }
        return kept + cutMark
    }

    /// Whether `text` is a value `cut` made: the mark, at the length only a cut reaches (a scalar
    /// cut whole leaves at most three bytes of room unused).
    public static func isCut(_ text: String) -> Bool {
        text.hasSuffix(cutMark) && text.utf8.count > maxBytes - 4
    }

    /// The notice's words for a value that was cut.
    static func cutProblem(_ what: String, of text: String) -> String {
        "the end of a \(what) of \(text.utf8.count) bytes (its first \(cut(text).utf8.count - cutMark.utf8.count) "
            + "are kept, marked \(cutMark))"
    }

    /// For notices: long or hostile values shortened.
    static func clip(_ text: String, _ limit: Int = 80) -> String {
        text.utf8.count <= limit ? text : String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "…"
    }
}
