/// telwatch's commands, as `telwatch COMMAND` names them (`watch` is also the default).
enum TelwatchCommand: String, CaseIterable, Sendable {
    case watch, status, events, doctor, log, block, allow, simulate, demo

    /// One line for the man page and the completions.
    var summary: String {
        switch self {
        case .watch: return "follow the calls and hold a background run while any is live (the default)"
        case .status: return "the calls live now, the run and the last sleep, from the running service"
        case .events: return "follow the running service's events"
        case .doctor: return "check what telwatch needs, one line each, with the fix"
        case .log: return "the calls recorded in the history"
        case .block: return "put numbers on the screening rules' block list; a running telwatch follows"
        case .allow: return "put numbers on the screening rules' allow list; a running telwatch follows"
        case .simulate: return "a fake ModemManager on a bus, driven by a script"
        case .demo: return "a short story against a private bus: see it work with no modem"
        }
    }

    /// What follows the options in the man page's synopsis (roff).
    var operands: String? {
        switch self {
        case .simulate: return "[\\fISCRIPT\\fR | \\-]"
        case .block, .allow: return "\\fINUMBER\\fR..."
        default: return nil
        }
    }
}

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

    /// An option that takes a value.
    init(_ flag: String?, _ value: String, _ help: String, commands: [TelwatchCommand], key: String? = nil,
         change: Change = .none, kind: ValueKind = .text) {
        self.flag = flag
        self.value = value
        self.help = help
        self.commands = commands
        self.key = key
        self.change = change
        self.kind = kind
    }

    /// A flag that takes no value (in the config file: `KEY = true|false`).
    init(_ flag: String, short: String? = nil, _ help: String, commands: [TelwatchCommand], key: String? = nil,
         change: Change = .none) {
        self.flag = flag
        self.short = short
        self.help = help
        self.commands = commands
        self.key = key
        self.change = change
        kind = .none
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

/// Every option and setting, in the order `--help` and the man pages list them.
enum OptionTable {
    private static let watchLike: [TelwatchCommand] = [.watch]
    private static let buses = ["system", "session"]
    private static let backends = ["auto", "modemmanager", "ofono"]

    static let options: [OptionSpec] = [
        OptionSpec("--backend", "auto|modemmanager|ofono", "which stacks to follow (default auto: whichever run)",
                   commands: [.watch, .status, .doctor], key: "backend", change: .restart, kind: .words(backends)),
        OptionSpec("--bus", "system|session|ADDRESS", "the bus (default system)",
                   commands: [.watch, .status, .events, .doctor, .log], key: "bus", change: .restart, kind: .words(buses)),
        OptionSpec("--bus", "system|session|ADDRESS", "the bus to own ModemManager's name on (default session)",
                   commands: [.simulate], kind: .words(buses)),
        OptionSpec("--json", "JSON Lines instead of text (every event's keys: docs/user-guide.md)",
                   commands: [.watch, .status, .events, .demo], key: "json", change: .restart),
        OptionSpec("--json", "JSON Lines with the event stream's key names (and unseen)", commands: [.log]),
        OptionSpec("--inhibit", "WHAT[:MODE]|none", "what a run inhibits (default sleep:block; e.g. sleep:idle:block)",
                   commands: [.watch, .doctor], key: "inhibit", change: .restart,
                   kind: .words(["sleep:block", "sleep:delay", "sleep:idle:block", "none"])),
        OptionSpec("--hooks", "DIR", "run DIR/EVENT and DIR/EVENT.d/* for each event",
                   commands: [.watch, .doctor, .demo], key: "hooks", change: .reload, kind: .directory),
        OptionSpec(nil, "COMMAND ARGS…", "one more hook for EVENT (may be given several times): split as sh would, "
                   + "no shell", commands: watchLike, key: "hook.EVENT", change: .reload, kind: .command),
        OptionSpec("--hook-timeout", "DURATION", "kill a hook still running after this (default 30s)",
                   commands: [.watch, .demo], key: "hook-timeout", change: .reload),
        OptionSpec("--while", "SCOPE=CMD ARGS…", "run CMD while any call is in SCOPE: ringing, waiting, dialing, "
                   + "alerting, active, held or live (any call); one argument, split as sh would, no shell; stopped "
                   + "with SIGTERM the moment no call is in SCOPE (SIGKILL after --stop-grace); may be given several "
                   + "times (config file: while.SCOPE = CMD ARGS…)",
                   commands: watchLike, key: "while.SCOPE", change: .reload, kind: .command),
        OptionSpec("--contacts", "FILE", "names for numbers: vCard (FN, TEL) or NUMBER<TAB>NAME; read again whenever "
                   + "the file changes", commands: watchLike, key: "contacts", change: .restart, kind: .file),
        OptionSpec("--screening", "FILE", "screen incoming calls by the rules in FILE (block, allow, block-list, "
                   + "allow-list, withheld, unknown, quiet, except; docs/screening.md): reject, silence, ignore or "
                   + "allow each before it rings; read again when it changes and on SIGHUP; a file that cannot be "
                   + "read screens nothing", commands: [.watch, .doctor], key: "screening", change: .reload, kind: .file),
        OptionSpec("--screening", "FILE", "the rules file to edit (default: the config file's screening, else the "
                   + "service's: as root, the one /etc/telwatch/telwatch.conf names; as another user, "
                   + "~/.config/telwatch/screening.conf, the user unit's); created if it does not exist",
                   commands: [.block, .allow], kind: .file),
        OptionSpec("--run", "-- CMD ARGS…", "run CMD for the whole of each run (no shell); stopped with SIGTERM, then "
                   + "SIGKILL after --stop-grace (config file: run = CMD ARGS…, split as sh would)",
                   commands: watchLike, key: "run", change: .restart, kind: .command),
        OptionSpec("--stop-grace", "DURATION", "between SIGTERM and SIGKILL of the run command and of call-scoped "
                   + "commands (default 5s)", commands: watchLike, key: "stop-grace", change: .restart),
        OptionSpec("--lease", "DURATION|none", "a run not renewed for this long ends itself (default 4h)",
                   commands: watchLike, key: "lease", change: .restart),
        OptionSpec("--heartbeat", "DURATION", "a heartbeat event this often while a run lives (default none)",
                   commands: watchLike, key: "heartbeat", change: .restart),
        OptionSpec("--wakelock", "also hold a kernel wakelock during runs, where there is one",
                   commands: watchLike, key: "wakelock", change: .restart),
        OptionSpec("--sleep-delay-lock", "hold a sleep delay lock while awake, so telwatch records a sleep before it "
                   + "happens (released at once, retaken on resume)",
                   commands: [.watch, .doctor], key: "sleep-delay-lock", change: .restart),
        OptionSpec("--resume-grace", "DURATION|none", "after a resume, keep the system awake this long so a call that "
                   + "woke it is handled (default none; e.g. 10s)",
                   commands: watchLike, key: "resume-grace", change: .restart),
        OptionSpec("--state-dir", "DIR", "where the live run and the call history are kept (default "
                   + "$STATE_DIRECTORY, $XDG_STATE_HOME/telwatch or ~/.local/state/telwatch)",
                   commands: [.watch, .status, .doctor, .log], key: "state-dir", change: .restart, kind: .directory),
        OptionSpec("--no-history", "do not record calls in DIR/history.db (config file: history = false)",
                   commands: [.watch, .doctor], key: "history", change: .restart),
        OptionSpec("--history-keep", "DURATION|0", "drop calls first seen longer ago than this (default 365d; 0 keeps "
                   + "every call)", commands: watchLike, key: "history-keep", change: .restart),
        OptionSpec("--feedback", "ring and vibrate through feedbackd while a call rings",
                   commands: [.watch, .doctor, .demo], key: "feedback", change: .restart),
        OptionSpec("--call-audio", "call audio mode through callaudiod while a call is connected",
                   commands: [.watch, .doctor, .demo], key: "call-audio", change: .restart),
        OptionSpec("--notify", "a desktop notification for each missed call",
                   commands: [.watch, .doctor, .demo], key: "notify", change: .restart),
        OptionSpec("--session-bus", "ADDRESS", "the phone session's bus for those (default $DBUS_SESSION_BUS_ADDRESS)",
                   commands: [.watch, .doctor], key: "session-bus", change: .restart, kind: .words(["session"])),
        OptionSpec("--redact-numbers", "show only the last two digits of phone numbers (API and MQTT too)",
                   commands: [.watch, .demo, .log], key: "redact-numbers", change: .reload),
        OptionSpec("--no-api", "do not own io.telwatch.Monitor1, the D-Bus API that telwatch status and telwatch "
                   + "events ask (config file: api = false)", commands: watchLike, key: "api", change: .restart),
        OptionSpec("--api-bus", "system|session", "the API's bus (default: the bus watched)",
                   commands: [.watch, .status, .events, .log], key: "api-bus", change: .restart, kind: .words(buses)),
        OptionSpec("--mqtt", "mqtt[s]://HOST[:PORT]", "also publish to an MQTT broker: retained TOPIC/status, /calls, "
                   + "/run, /state; every event on /events", commands: watchLike, key: "mqtt", change: .restart),
        OptionSpec("--mqtt-topic", "TOPIC", "the topics' root (default telwatch/%h, %h the host name)",
                   commands: watchLike, key: "mqtt-topic", change: .restart),
        OptionSpec("--mqtt-credentials", "FILE", "the MQTT user (line 1) and password (line 2); never on argv",
                   commands: watchLike, key: "mqtt-credentials", change: .restart, kind: .file),
        OptionSpec("--mqtt-ca", "FILE", "TLS: the broker's CA", commands: watchLike, key: "mqtt-ca", change: .restart,
                   kind: .file),
        OptionSpec("--mqtt-cert", "FILE", "TLS: a client certificate", commands: watchLike, key: "mqtt-cert",
                   change: .restart, kind: .file),
        OptionSpec("--mqtt-key", "FILE", "TLS: the client certificate's key", commands: watchLike, key: "mqtt-key",
                   change: .restart, kind: .file),
        OptionSpec(nil, "USER", "the MQTT user (not taken on the command line, where ps shows it)",
                   commands: watchLike, key: "mqtt-user", change: .restart),
        OptionSpec(nil, "PASSWORD", "the MQTT password (not taken on the command line, where ps shows it)",
                   commands: watchLike, key: "mqtt-password", change: .restart),
        OptionSpec("--mqtt-keepalive", "DURATION", "the MQTT keepalive, 5s to 1h (default 60s)", commands: watchLike,
                   key: "mqtt-keepalive", change: .restart),
        OptionSpec("--mqtt-reconnect-max", "DURATION", "the longest wait between reconnection attempts (default 60s)",
                   commands: watchLike, key: "mqtt-reconnect-max", change: .restart),
        OptionSpec("--mqtt-outbox-limit", "N", "events kept for the broker while it is away, 2 to 10000000 (default 10000)",
                   commands: watchLike, key: "mqtt-outbox-limit", change: .restart),
        OptionSpec("--mqtt-outbox-max-age", "DURATION", "events older than this leave the outbox unsent (default 7d)",
                   commands: watchLike, key: "mqtt-outbox-max-age", change: .restart),
        OptionSpec("--mqtt-max-message", "BYTES", "the largest message published, 1024 to 268435456 (default 262144)",
                   commands: watchLike, key: "mqtt-max-message", change: .restart),
        OptionSpec("--mqtt-homeassistant", "true|false", "publish Home Assistant discovery (default true)", commands: watchLike,
                   key: "mqtt-homeassistant", change: .restart),
        OptionSpec("--mqtt-discovery-prefix", "TOPIC", "Home Assistant's discovery prefix (default homeassistant)", commands: watchLike,
                   key: "mqtt-discovery-prefix", change: .restart),
        OptionSpec("--mqtt-commands", "take commands from TOPIC/command: `silence`, `hangup` (or `reject`) and "
                   + "`answer` of a CALL_ID or the one `ringing` call, `tones CALL_ID DIGITS`; Home Assistant gets "
                   + "Reject and Silence buttons (off by default)", commands: watchLike, key: "mqtt-commands", change: .restart),
        OptionSpec(nil, "quiet|normal|verbose", "how much goes to stdout and stderr (default normal)",
                   commands: watchLike, key: "verbosity", change: .reload, kind: .words(["quiet", "normal", "verbose"])),
        OptionSpec("--quiet", short: "-q", "less on stdout and stderr", commands: watchLike, key: "quiet",
                   change: .reload),
        OptionSpec("--verbose", short: "-v", "more on stdout and stderr",
                   commands: [.watch, .events, .demo], key: "verbose", change: .reload),
        OptionSpec("--config", "FILE", "KEY = VALUE settings (telwatch.conf(5)); flags win",
                   commands: [.watch, .events, .doctor, .log, .block, .allow], kind: .file),
        OptionSpec("--user", "NAME", "check as this account, the one the service runs as (needs root)",
                   commands: [.doctor], kind: .text),
        OptionSpec("--missed", "only missed calls", commands: [.log]),
        OptionSpec("--unseen", "only missed calls not marked seen yet", commands: [.log]),
        OptionSpec("--screened", "only calls call screening rejected, ignored or silenced", commands: [.log]),
        OptionSpec("--since", "DURATION|DATE", "calls first seen since then: 2h, 7d, 2026-11-29, 2026-11-29 08:00",
                   commands: [.log]),
        OptionSpec("--number", "N", "calls whose number contains N", commands: [.log]),
        OptionSpec("--limit", "N", "at most N calls", commands: [.log]),
        OptionSpec("--csv", "CSV (RFC 4180) with the same columns; a cell that a spreadsheet would run as a formula "
                   + "(=, +, -, @) starts with a '", commands: [.log]),
        OptionSpec("--mark-seen", "mark the missed calls listed as seen", commands: [.log]),
        OptionSpec("--modems", "N", "how many modems the fake has, 0 to 16 (default 1)", commands: [.simulate]),
        OptionSpec("--exit", "exit when the script is done instead of serving the bus on", commands: [.simulate]),
        OptionSpec("--speed", "X", "play the story X times faster (0.1 to 1000)", commands: [.demo]),
    ]

    /// Flags that name settings only the config file takes: the parser knows them to say why
    /// they are refused, rather than calling them unknown.
    static let refusedOnCommandLine: Set<String> = ["--mqtt-password", "--mqtt-user"]

    /// The options `command` takes, in table order (a flag listed once).
    static func options(for command: TelwatchCommand) -> [OptionSpec] {
        options.filter { $0.flag != nil && $0.commands.contains(command) }
    }

    /// The names the parser of `command` accepts besides --help.
    static func accepted(by command: TelwatchCommand) -> Set<String> {
        Set(options(for: command).flatMap(\.names))
    }

    /// The config file's settings, one per key, in table order.
    static var settings: [OptionSpec] {
        var seen: Set<String> = []
        return options.filter { spec in
            guard let key = spec.key, spec.commands.contains(.watch) else { return false }
            return seen.insert(key).inserted
        }
    }
}
