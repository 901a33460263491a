/// `telwatch --generate man1|man5|bash|zsh|fish`: the reference made from the option table, on
/// stdout. Hidden from --help: it is for packaging and for the drift test.
enum ReferenceCommand {
    static let kinds = ["man1", "man5", "bash", "zsh", "fish"]

    static func run(_ arguments: [String]) -> Int32 {
        let text: String
        switch arguments.first {
        case "man1" where arguments.count == 1: text = ManPage.commandManual
        case "man5" where arguments.count == 1: text = ManPage.configManual
        case "bash" where arguments.count == 1: text = Completions.bash
        case "zsh" where arguments.count == 1: text = Completions.zsh
        case "fish" where arguments.count == 1: text = Completions.fish
        default:
            warn("--generate takes one of \(kinds.joined(separator: ", "))")
            return ExitStatus.usage.code
        }
        // The texts end with a newline; LineWriter adds one.
        LineWriter(fd: 1).write(String(text.dropLast()))
        return ExitStatus.success.code
    }
}
