/// `--help` text made from the option table, so it lists exactly what the parser takes.
enum OptionHelp {
    /// The column the help text starts in, and the width lines wrap at.
    static let helpColumn = 37
    static let width = 100

    /// `  --backend auto|modemmanager|ofono  which stacks…`, one entry per option of `command`,
    /// help wrapped under its column.
    static func list(for command: TelwatchCommand) -> String {
        list(OptionTable.options(for: command))
    }

    /// `command`'s options under their groups' headings (`MQTT export options:`), the groups in
    /// `OptionGroup.listed`'s order (the sinks' in the pipeline's), a blank line between them.
    static func groupedList(for command: TelwatchCommand) -> String {
        let options = OptionTable.options(for: command)
        return OptionGroup.listed.compactMap { group in
            let members = options.filter { $0.group == group }
            return members.isEmpty ? nil : group.title + ":\n" + list(members)
        }.joined(separator: "\n\n")
    }

    private static func list(_ options: [OptionSpec]) -> String {
        options.map { spec in
            let head = "  " + spec.synopsis
            let lines = wrap(spec.help, width: width - helpColumn)
            let pad = String(repeating: " ", count: helpColumn)
            if head.count + 2 > helpColumn {
                return ([head] + lines.map { pad + $0 }).joined(separator: "\n")
            }
            let first = head + String(repeating: " ", count: helpColumn - head.count) + lines[0]
            return ([first] + lines.dropFirst().map { pad + $0 }).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// `usage: telwatch status [--json] [--bus BUS] …`, wrapped under its first option.
    static func usage(for command: TelwatchCommand, operands: String? = nil) -> String {
        let head = "usage: telwatch " + command.rawValue + " "
        var words = OptionTable.options(for: command).map { spec in
            "[" + spec.names.joined(separator: "|") + (spec.value.map { " " + $0 } ?? "") + "]"
        }
        if let operands { words.append(operands) }
        let lines = wrap(words: words, width: width - head.count)
        let pad = String(repeating: " ", count: head.count)
        return head + lines[0] + lines.dropFirst().map { "\n" + pad + $0 }.joined()
    }

    /// Words of `text` in lines of at most `width` characters (a longer word stands alone).
    static func wrap(_ text: String, width: Int) -> [String] {
        wrap(words: text.split(separator: " ").map(String.init), width: width)
    }

    /// `words` (each kept whole) in lines of at most `width` characters.
    static func wrap(words: [String], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in words {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        lines.append(line)
        return lines
    }
}
