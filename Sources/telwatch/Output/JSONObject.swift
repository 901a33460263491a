/// One JSON object written in a fixed key order: the JSON Lines schema is stable and readable.
struct JSONObject {
    private(set) var text = "{"
    private var empty = true

    private mutating func key(_ name: String) {
        if !empty { text += "," }
        empty = false
        text += "\"" + name + "\":"
    }

    mutating func add(_ name: String, _ value: String?) {
        key(name)
        if let value { text += JSONObject.quote(value) } else { text += "null" }
    }

    mutating func add(_ name: String, _ value: Bool) {
        key(name)
        text += value ? "true" : "false"
    }

    mutating func add(_ name: String, _ value: Int) {
        key(name)
        text += String(value)
    }

    /// Seconds with millisecond precision, or null.
    mutating func add(_ name: String, seconds value: Double?) {
        key(name)
        guard let value, value.isFinite else { text += "null"; return }
        let milliseconds = Int((value * 1000).rounded())
        let sign = milliseconds < 0 ? "-" : ""
        let magnitude = abs(milliseconds)
        let fraction = String(magnitude % 1000)
        text += sign + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    var line: String { text + "}" }

    /// JSON string escaping: quotes, backslashes and every control character.
    static func quote(_ value: String) -> String {
        // Fast path: nothing to escape (the usual case) is one copy, not one append per scalar.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x7F }) {
            return "\"" + value + "\""
        }
        var out = "\""
        out.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
                || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

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
