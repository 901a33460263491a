/// The state directory's record format, one `key=value` per line. Values are escaped (`\\`,
/// `\n`, `\r`) so that any text survives a round trip and no value can forge another line.
public enum RecordFields {
    public static func encode(_ fields: [(key: String, value: String)]) -> String {
        // Written on every turn that changes a run or the live calls: the bytes are gathered in
        // one buffer, grown once, and made a string at the end (appending string to string costs
        // more than the copy).
        var capacity = 0
        for field in fields { capacity += field.key.utf8.count + field.value.utf8.count + 2 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity + capacity / 8)
        for field in fields {
            bytes.append(contentsOf: field.key.utf8)
            bytes.append(UInt8(ascii: "="))
            appendEscaped(field.value, to: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        return String(decoding: bytes, as: UTF8.self)
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

    /// Almost every value needs no escape: its bytes are appended whole.
    private static func appendEscaped(_ value: String, to bytes: inout [UInt8]) {
        // Native strings are contiguous UTF-8: scanned, then copied in one go.
        let copied = value.utf8.withContiguousStorageIfAvailable { raw -> Bool in
            for byte in raw where byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\n")
                || byte == UInt8(ascii: "\r") {
                return false
            }
            bytes.append(contentsOf: raw)
            return true
        } ?? false
        guard !copied else { return }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            default: bytes.append(byte)
            }
        }
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
