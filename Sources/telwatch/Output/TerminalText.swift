/// Text output never lets a caller id or a name reach the terminal raw: control characters
/// (an ESC sequence in a spoofed caller id could repaint the screen) are written as escapes.
enum TerminalText {
    static func escape(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{1B}": out += "\\e"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
                || (0x200B...0x200F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value):
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

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
