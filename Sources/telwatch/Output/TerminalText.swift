import Pipeline

/// Text output never lets a caller id, a name or any text from outside reach the terminal raw.
/// One set of characters is escaped on every text output (the event stream, `log`'s table and
/// CSV, `events`, `status`, `doctor`, `simulate`, stderr; docs/reference.md "How text is escaped"):
/// - controls (Unicode's `Cc`: C0, DEL, C1): an ESC or a C1 CSI (0x9B) starts a sequence that
///   can repaint the screen or set the window title, BEL rings, BS rubs out what was printed;
/// - format characters (`Cf`): the bidi overrides, isolates and marks (U+202A–U+202E,
///   U+2066–U+2069, U+200E, U+200F, U+061C) reorder what follows them, and the invisible ones
///   (U+200B–U+200D, U+2060, U+FEFF, the tags) hide text or make two numbers look alike;
/// - the line and paragraph separators (U+2028, U+2029): a second line, forged.
/// `\n` `\r` `\t` `\e` and `\\` keep their short forms; the rest is written `\u{HEX}`.
enum TerminalText {
    /// `EscapedText`'s one rule (Pipeline's: the D-Bus API's error messages follow it too).
    static func escape(_ value: String) -> String { EscapedText.escape(value) }

    /// Whether `scalar` is written as an escape (the set above).
    static func isEscaped(_ scalar: Unicode.Scalar) -> Bool { EscapedText.isEscaped(scalar) }

    /// A field in a space-separated line: escaped, and never empty or containing a bare space.
    static func field(_ value: String) -> String {
        let escaped = escape(value)
        if escaped.isEmpty { return "-" }
        return escaped.contains(" ") ? "\"" + escaped.replacingSpacesInQuotes() + "\"" : escaped
    }
}

private extension String {
    func replacingSpacesInQuotes() -> String {
        var out = ""
        for character in self { out += character == "\"" ? "\\\"" : String(character) }
        return out
    }
}
