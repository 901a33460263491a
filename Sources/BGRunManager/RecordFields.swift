/// The state directory's record format, one `key=value` per line. Values are escaped (`\\`,
/// `\n`, `\r`) so that any text survives a round trip and no value can forge another line.
public enum RecordFields {
    public static func encode(_ fields: [(key: String, value: String)]) -> String {
        fields.map { $0.key + "=" + escape($0.value) + "\n" }.joined()
    }

    /// The fields by key; nil when a line is not `key=value`.
    public static func decode(_ text: String) -> [String: String]? {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { return nil }
            fields[String(line[..<equals])] = unescape(line[line.index(after: equals)...])
        }
        return fields
    }

    private static func escape(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    private static func unescape(_ value: Substring) -> String {
        var out = ""
        var escaping = false
        for character in value.unicodeScalars {
            if escaping {
                switch character {
                case "n": out += "\n"
                case "r": out += "\r"
                default: out.unicodeScalars.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
