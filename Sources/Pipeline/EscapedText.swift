/// Text from outside (a caller id, a stack's error message) as every output writes it: no
/// control, format or line-separator character raw (docs/reference.md, "How text is escaped",
/// lists the set and why). The terminal's text, `log`'s CSV and the D-Bus API's error messages
/// all follow this one rule.
public enum EscapedText {
    /// `\n` `\r` `\t` `\e` and `\\` keep their short forms; the rest is written `\u{HEX}`.
    public static func escape(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{1B}": out += "\\e"
            case _ where isEscaped(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `scalar` is written as an escape: controls (`Cc`), format characters (`Cf`: the
    /// bidi overrides, the invisible ones), the line and paragraph separators.
    public static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return scalar.value < 0x20 || scalar.value == 0x7F }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
