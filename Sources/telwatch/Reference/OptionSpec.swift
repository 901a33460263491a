/// One option or setting of telwatch: the single description that the parser's accepted options,
/// `--help`, telwatch(1), telwatch.conf(5) and the shell completions all come from.
struct OptionSpec: Sendable {
    /// When a running `telwatch watch` takes a new value of the setting (SIGHUP).
    enum Change: Sendable {
        /// At once, on SIGHUP.
        case reload
        /// At the next start: it shapes the bus, the backends, the output or the run.
        case restart
        /// Not a setting of the daemon (a command's own option).
        case none
    }

    /// What a value is, for the completions.
    enum ValueKind: Sendable, Equatable {
        case none
        case text
        case file
        case directory
        case command
        case words([String])
    }

    /// `--backend`; nil for a setting only the config file takes.
    var flag: String?
    /// `-q`.
    var short: String?
    /// The value's placeholder (`auto|modemmanager|ofono`), nil for a flag that takes none.
    var value: String?
    var help: String
    var commands: [TelwatchCommand]
    /// The config file's key, nil when the config file does not take it.
    var key: String?
    var change: Change
    var kind: ValueKind
    /// Where `--help` and telwatch(1) list it: a sink's options are its sink's group.
    var group: OptionGroup

    /// An option that takes a value.
    init(_ flag: String?, _ value: String, _ help: String, commands: [TelwatchCommand], key: String? = nil,
         change: Change = .none, kind: ValueKind = .text, group: OptionGroup = .general) {
        self.flag = flag
        self.value = value
        self.help = help
        self.commands = commands
        self.key = key
        self.change = change
        self.kind = kind
        self.group = group
    }

    /// A flag that takes no value (in the config file: `KEY = true|false`).
    init(_ flag: String, short: String? = nil, _ help: String, commands: [TelwatchCommand], key: String? = nil,
         change: Change = .none, group: OptionGroup = .general) {
        self.flag = flag
        self.short = short
        self.help = help
        self.commands = commands
        self.key = key
        self.change = change
        kind = .none
        self.group = group
    }

    /// The value as the config file takes it.
    var configValue: String {
        guard let value else { return "true|false" }
        if value.hasPrefix("-- ") { return String(value.dropFirst(3)) }
        if key?.hasPrefix("while.") == true { return "CMD ARGS…" }
        return value
    }

    /// `--backend auto|modemmanager|ofono`, `--quiet, -q`.
    var synopsis: String {
        var text = flag ?? ""
        if let short { text += ", " + short }
        if let value { text += " " + value }
        return text
    }

    /// The names the parser takes: the flag and its short form.
    var names: [String] { [flag, short].compactMap { $0 } }
}
