/// Every option and setting, in the order `--help` and the man pages list them.
enum OptionTable {
    private static let watchLike: [TelwatchCommand] = [.watch]
    private static let buses = ["system", "session"]
    private static let backends = ["auto", "modemmanager", "ofono"]

    static let options: [OptionSpec] = [
        OptionSpec("--backend", "auto|modemmanager|ofono", "which stacks to follow (default auto: whichever run)",
                   commands: [.watch, .status, .doctor], key: "backend", change: .restart, kind: .words(backends)),
        OptionSpec("--bus", "system|session|ADDRESS", "the bus (default system)",
                   commands: [.watch, .status, .events, .doctor, .log] + TelwatchCommand.acts, key: "bus", change: .restart,
                   kind: .words(buses)),
        OptionSpec("--bus", "system|session|ADDRESS", "the bus to own ModemManager's name on (default session)",
                   commands: [.simulate], kind: .words(buses), group: .otherCommands),
        OptionSpec("--json", "JSON Lines instead of text (every event's keys: docs/user-guide.md)",
                   commands: [.watch, .status, .events, .demo], key: "json", change: .restart, group: .output),
        OptionSpec("--json", "JSON Lines with the event stream's key names (and unseen)", commands: [.log],
                   group: .log),
        OptionSpec("--inhibit", "WHAT[:MODE]|none", "what a run inhibits (default sleep:block; e.g. sleep:idle:block)",
                   commands: [.watch, .doctor], key: "inhibit", change: .restart,
                   kind: .words(["sleep:block", "sleep:delay", "sleep:idle:block", "none"]), group: .runs),
        OptionSpec("--hooks", "DIR", "run DIR/EVENT and DIR/EVENT.d/* for each event",
                   commands: [.watch, .doctor, .demo], key: "hooks", change: .reload, kind: .directory, group: .hooks),
        OptionSpec(nil, "COMMAND ARGS…", "one more hook for EVENT (may be given several times): split as sh would, "
                   + "no shell", commands: watchLike, key: "hook.EVENT", change: .reload, kind: .command,
                   group: .hooks),
        OptionSpec("--hook-timeout", "DURATION", "kill a hook still running after this (default 30s)",
                   commands: [.watch, .demo], key: "hook-timeout", change: .reload, group: .hooks),
        OptionSpec("--while", "SCOPE=CMD ARGS…", "run CMD while any call is in SCOPE: ringing, waiting, dialing, "
                   + "alerting, active, held or live (any call); one argument, split as sh would, no shell; stopped "
                   + "with SIGTERM the moment no call is in SCOPE (SIGKILL after --stop-grace); may be given several "
                   + "times (config file: while.SCOPE = CMD ARGS…)",
                   commands: watchLike, key: "while.SCOPE", change: .reload, kind: .command, group: .callCommands),
        OptionSpec("--contacts", "FILE", "names for numbers: vCard (FN, TEL) or NUMBER<TAB>NAME; read again whenever "
                   + "the file changes", commands: watchLike, key: "contacts", change: .restart, kind: .file),
        OptionSpec("--screening", "FILE", "screen incoming calls by the rules in FILE (block, allow, block-list, "
                   + "allow-list, withheld, unknown, quiet, except, voicemail, command; docs/screening.md): reject "
                   + "(and run a command), deflect, silence, ignore or allow each before it rings; read again when it "
                   + "changes and on SIGHUP; a file that cannot be read screens nothing", commands: [.watch, .doctor],
                   key: "screening", change: .reload, kind: .file, group: .screening),
        OptionSpec("--screening", "FILE", "the rules file to edit (default: the config file's screening, else the "
                   + "service's: as root, the one /etc/telwatch/telwatch.conf names; as another user, "
                   + "~/.config/telwatch/screening.conf, the user unit's); created if it does not exist",
                   commands: [.block, .allow], kind: .file, group: .screening),
        OptionSpec("--run", "-- CMD ARGS…", "run CMD for the whole of each run (no shell); stopped with SIGTERM, then "
                   + "SIGKILL after --stop-grace (config file: run = CMD ARGS…, split as sh would)",
                   commands: watchLike, key: "run", change: .restart, kind: .command, group: .runs),
        OptionSpec("--stop-grace", "DURATION", "between SIGTERM and SIGKILL of the run command and of call-scoped "
                   + "commands (default 5s)", commands: watchLike, key: "stop-grace", change: .restart, group: .runs),
        OptionSpec("--lease", "DURATION|none", "a run not renewed for this long ends itself (default 4h)",
                   commands: watchLike, key: "lease", change: .restart, group: .runs),
        OptionSpec("--heartbeat", "DURATION", "a heartbeat event this often while a run lives (default none)",
                   commands: watchLike, key: "heartbeat", change: .restart, group: .runs),
        OptionSpec("--wakelock", "also hold a kernel wakelock during runs, where there is one",
                   commands: watchLike, key: "wakelock", change: .restart, group: .runs),
        OptionSpec("--sleep-delay-lock", "hold a sleep delay lock while awake, so telwatch records a sleep before it "
                   + "happens (released at once, retaken on resume)",
                   commands: [.watch, .doctor], key: "sleep-delay-lock", change: .restart, group: .runs),
        OptionSpec("--resume-grace", "DURATION|none", "after a resume, keep the system awake this long so a call that "
                   + "woke it is handled (default none; e.g. 10s)",
                   commands: watchLike, key: "resume-grace", change: .restart, group: .runs),
        OptionSpec("--state-dir", "DIR", "where the live run and the call history are kept (default "
                   + "$STATE_DIRECTORY, $XDG_STATE_HOME/telwatch or ~/.local/state/telwatch)",
                   commands: [.watch, .status, .doctor, .log], key: "state-dir", change: .restart, kind: .directory),
        OptionSpec("--no-history", "do not record calls in DIR/history.db (config file: history = false)",
                   commands: [.watch, .doctor], key: "history", change: .restart, group: .history),
        OptionSpec("--history-keep", "DURATION|0", "drop calls first seen longer ago than this (default 365d; 0 keeps "
                   + "every call)", commands: watchLike, key: "history-keep", change: .restart, group: .history),
        OptionSpec("--feedback", "ring and vibrate through feedbackd while a call rings",
                   commands: [.watch, .doctor, .demo], key: "feedback", change: .restart, group: .phoneActions),
        OptionSpec("--call-audio", "call audio mode through callaudiod while a call is connected",
                   commands: [.watch, .doctor, .demo], key: "call-audio", change: .restart, group: .phoneActions),
        OptionSpec("--notify", "a desktop notification for each missed call",
                   commands: [.watch, .doctor, .demo], key: "notify", change: .restart, group: .phoneActions),
        OptionSpec("--session-bus", "ADDRESS", "the phone session's bus for those (default $DBUS_SESSION_BUS_ADDRESS)",
                   commands: [.watch, .doctor], key: "session-bus", change: .restart, kind: .words(["session"]),
                   group: .phoneActions),
        OptionSpec("--redact-numbers", "show only the last two digits of phone numbers (API and MQTT too)",
                   commands: [.watch, .demo, .log], key: "redact-numbers", change: .reload, group: .output),
        OptionSpec("--no-api", "do not own io.telwatch.Monitor1, the D-Bus API that telwatch status and telwatch "
                   + "events ask (config file: api = false)", commands: watchLike, key: "api", change: .restart,
                   group: .api),
        OptionSpec("--api-bus", "system|session", "the API's bus (default: the bus watched)",
                   commands: [.watch, .status, .events, .log] + TelwatchCommand.acts, key: "api-bus", change: .restart,
                   kind: .words(buses), group: .api),
        OptionSpec("--mqtt", "mqtt[s]://HOST[:PORT]", "also publish to an MQTT broker: retained TOPIC/status, /calls, "
                   + "/run, /state; every event on /events", commands: watchLike, key: "mqtt", change: .restart,
                   group: .mqtt),
        OptionSpec("--mqtt-topic", "TOPIC", "the topics' root (default telwatch/%h, %h the host name)",
                   commands: watchLike, key: "mqtt-topic", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-credentials", "FILE", "the MQTT user (line 1) and password (line 2); never on argv",
                   commands: watchLike, key: "mqtt-credentials", change: .restart, kind: .file, group: .mqtt),
        OptionSpec("--mqtt-ca", "FILE", "TLS: the broker's CA", commands: watchLike, key: "mqtt-ca", change: .restart,
                   kind: .file, group: .mqtt),
        OptionSpec("--mqtt-cert", "FILE", "TLS: a client certificate", commands: watchLike, key: "mqtt-cert",
                   change: .restart, kind: .file, group: .mqtt),
        OptionSpec("--mqtt-key", "FILE", "TLS: the client certificate's key", commands: watchLike, key: "mqtt-key",
                   change: .restart, kind: .file, group: .mqtt),
        OptionSpec(nil, "USER", "the MQTT user (not taken on the command line, where ps shows it)",
                   commands: watchLike, key: "mqtt-user", change: .restart, group: .mqtt),
        OptionSpec(nil, "PASSWORD", "the MQTT password (not taken on the command line, where ps shows it)",
                   commands: watchLike, key: "mqtt-password", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-keepalive", "DURATION", "the MQTT keepalive, 5s to 1h (default 60s)", commands: watchLike,
                   key: "mqtt-keepalive", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-reconnect-max", "DURATION", "the longest wait between reconnection attempts (default 60s)",
                   commands: watchLike, key: "mqtt-reconnect-max", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-outbox-limit", "N", "events kept for the broker while it is away, 2 to 10000000 (default 10000)",
                   commands: watchLike, key: "mqtt-outbox-limit", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-outbox-max-age", "DURATION", "events older than this leave the outbox unsent (default 7d)",
                   commands: watchLike, key: "mqtt-outbox-max-age", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-max-message", "BYTES", "the largest message published, 1024 to 268435456 (default 262144)",
                   commands: watchLike, key: "mqtt-max-message", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-homeassistant", "true|false", "publish Home Assistant discovery (default true)", commands: watchLike,
                   key: "mqtt-homeassistant", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-discovery-prefix", "TOPIC", "Home Assistant's discovery prefix (default homeassistant)", commands: watchLike,
                   key: "mqtt-discovery-prefix", change: .restart, group: .mqtt),
        OptionSpec("--mqtt-commands", "take commands from TOPIC/command: `silence`, `hangup` (or `reject`) and "
                   + "`answer` of a CALL_ID or the one `ringing` call, `tones CALL_ID DIGITS`; Home Assistant gets "
                   + "Reject and Silence buttons (off by default)", commands: watchLike, key: "mqtt-commands", change: .restart,
                   group: .mqtt),
        OptionSpec(nil, "quiet|normal|verbose", "how much goes to stdout and stderr (default normal)",
                   commands: watchLike, key: "verbosity", change: .reload, kind: .words(["quiet", "normal", "verbose"]),
                   group: .output),
        OptionSpec("--quiet", short: "-q", "less on stdout and stderr", commands: watchLike, key: "quiet",
                   change: .reload, group: .output),
        OptionSpec("--verbose", short: "-v", "more on stdout and stderr",
                   commands: [.watch, .events, .demo], key: "verbose", change: .reload, group: .output),
        OptionSpec("--config", "FILE", "KEY = VALUE settings (telwatch.conf(5)); flags win",
                   commands: [.watch, .events, .doctor, .log, .block, .allow], kind: .file),
        OptionSpec("--user", "NAME", "check as this account, the one the service runs as (needs root)",
                   commands: [.doctor], kind: .text, group: .otherCommands),
        OptionSpec("--missed", "only missed calls", commands: [.log], group: .log),
        OptionSpec("--unseen", "only missed calls not marked seen yet", commands: [.log], group: .log),
        OptionSpec("--screened", "only calls call screening rejected, deflected, ignored or silenced", commands: [.log],
                   group: .log),
        OptionSpec("--since", "DURATION|DATE", "calls first seen since then: 2h, 7d, 2026-11-29, 2026-11-29 08:00",
                   commands: [.log], group: .log),
        OptionSpec("--number", "N", "calls whose number contains N", commands: [.log], group: .log),
        OptionSpec("--limit", "N", "at most N calls", commands: [.log], group: .log),
        OptionSpec("--csv", "CSV (RFC 4180) with the same columns; a cell that a spreadsheet would run as a formula "
                   + "(=, +, -, @) starts with a '", commands: [.log], group: .log),
        OptionSpec("--mark-seen", "mark the missed calls listed as seen", commands: [.log], group: .log),
        OptionSpec("--modem", "PATH", "the modem to dial on, its object path (default: the one voice modem)",
                   commands: [.dial], group: .otherCommands),
        OptionSpec("--modems", "N", "how many modems the fake has, 0 to 16 (default 1)", commands: [.simulate],
                   group: .otherCommands),
        OptionSpec("--exit", "exit when the script is done instead of serving the bus on", commands: [.simulate],
                   group: .otherCommands),
        OptionSpec("--speed", "X", "play the story X times faster (0.1 to 1000)", commands: [.demo],
                   group: .otherCommands),
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
