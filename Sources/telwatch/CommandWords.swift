/// A command line of the config file (`hook.EVENT`, `while.SCOPE`, `run`) split into an argv by
/// the quoting rules of `sh`, with no shell: words are separated by spaces and tabs; inside
/// `'…'` every character is itself; inside `"…"` a backslash escapes only `"`, `\`, `$` and
/// `` ` `` (and is kept before anything else); outside quotes a backslash makes the next
/// character itself. `''` is an empty word. Nothing is expanded: `$HOME`, `~`, `*`, `;` and `|`
/// are plain characters, so a command can never run more than the one program it names.
enum CommandWords {
    enum Failure: Error, Equatable, CustomStringConvertible {
        case unterminatedSingleQuote
        case unterminatedDoubleQuote
        case trailingBackslash

        var description: String {
            switch self {
            case .unterminatedSingleQuote: return "a ' quote is not closed"
            case .unterminatedDoubleQuote: return "a \" quote is not closed"
            case .trailingBackslash: return "the line ends with a backslash that escapes nothing"
            }
        }
    }

    static func split(_ line: String) throws(Failure) -> [String] {
        enum Mode { case plain, single, double }
        var words: [String] = []
        var word = ""
        // A word exists once anything of it is seen, an empty pair of quotes included.
        var inWord = false
        var mode = Mode.plain
        var escaped = false
        for character in line {
            if escaped {
                if mode == .double && !"\"\\$`".contains(character) { word.append("\\") }
                word.append(character)
                escaped = false
                continue
            }
            switch mode {
            case .single:
                if character == "'" { mode = .plain } else { word.append(character) }
            case .double:
                switch character {
                case "\"": mode = .plain
                case "\\": escaped = true
                default: word.append(character)
                }
            case .plain:
                switch character {
                case " ", "\t":
                    if inWord { words.append(word) }
                    word = ""
                    inWord = false
                case "'": mode = .single; inWord = true
                case "\"": mode = .double; inWord = true
                case "\\": escaped = true; inWord = true
                default: word.append(character); inWord = true
                }
            }
        }
        switch mode {
        case .single: throw .unterminatedSingleQuote
        case .double: throw .unterminatedDoubleQuote
        case .plain: if escaped { throw .trailingBackslash }
        }
        if inWord { words.append(word) }
        return words
    }
}
