/// What telwatch(1) says beyond the options: exit statuses, signals, environment, files, hook
/// events and variables. `--help` and the man page take them from here.
enum ManualFacts {
    static let exitStatuses: [(code: Int32, meaning: String)] = ExitStatus.allCases.map { ($0.code, meaning($0)) }

    /// A switch, so that a new exit status cannot go undocumented.
    static func meaning(_ status: ExitStatus) -> String {
        switch status {
        case .success: return "stopped by SIGINT or SIGTERM, or done"
        case .failure:
            return "a failure at run time (log: the history cannot be read, or this user may not read it; "
                + "status, events: the bus policy refused this user, or the service refused; block, allow: the rules "
                + "file cannot be read or written, or it does not parse)"
        case .usage:
            return "bad usage or configuration (the systemd units do not restart telwatch after it: "
                + "RestartPreventExitStatus=2)"
        case .busUnavailable: return "the bus is unreachable or was lost (a supervisor should restart telwatch)"
        case .problemsFound: return "doctor found problems (a bus it cannot reach is 3)"
        case .apiNameTaken: return "another telwatch owns io.telwatch.Monitor1 (--no-api runs a second one)"
        }
    }

    static let signals: [(name: String, meaning: String)] = [
        ("SIGINT, SIGTERM", "stop: the run ends, the lock is released, running hooks get their time"),
        ("SIGHUP", "read the configuration again: hooks, call-scoped commands, verbosity and redaction at once; "
            + "the rest at the next start (telwatch.conf(5) says which)"),
        ("SIGUSR1", "print a stats line"),
    ]

    static let environment: [(name: String, meaning: String)] = [
        ("STATE_DIRECTORY", "the state directory, as systemd's StateDirectory= sets it (the first of a list)"),
        ("XDG_STATE_HOME", "else the state directory is $XDG_STATE_HOME/telwatch"),
        ("HOME", "else ~/.local/state/telwatch"),
        ("XDG_CONFIG_HOME", "the user unit's rules file, $XDG_CONFIG_HOME/telwatch/screening.conf (default "
            + "~/.config), which block and allow edit run as a user other than root"),
        ("DBUS_SESSION_BUS_ADDRESS", "the session bus (--bus session, and the phone actions' bus)"),
        ("DBUS_SYSTEM_BUS_ADDRESS", "the system bus, when not the default"),
        ("TMPDIR", "where demo puts its private bus (default /tmp)"),
    ]

    static let files: [(path: String, meaning: String)] = [
        ("/etc/telwatch/telwatch.conf", "the system service's settings (telwatch.conf(5)); block, allow, doctor and "
            + "log read it, run as root or as telwatch, when given no --config"),
        ("/etc/telwatch/screening.conf", "the system service's call screening rules, empty as packaged; sudo "
            + "telwatch block and allow edit it"),
        ("~/.config/telwatch/screening.conf", "the user unit's rules ($XDG_CONFIG_HOME/telwatch/screening.conf): "
            + "block and allow run as that user edit it"),
        ("STATE/current-run", "the live run (mode 0640, readable by the service's group): a telwatch killed mid-run "
            + "is cleaned up after by the next one, and status shows it"),
        ("STATE/last-sleep", "the last sleep and resume (mode 0640)"),
        ("STATE/live-calls", "the calls live at the last change (mode 0640): a call that outlives a restart or a "
            + "kill of telwatch keeps its call id, first sight and answer"),
        ("STATE/instance.lock", "held for the life of the process: one telwatch per state directory"),
        ("STATE/history.db", "the call history (SQLite) that telwatch log reads"),
        ("HOOKS/EVENT, HOOKS/EVENT.d/*", "hooks: executable files named after an event; anything else in the "
            + "directory (a README) is never run"),
    ]

    static let hookEvents: [(name: String, meaning: String)] = HookEvents.meanings

    /// Every `TELWATCH_*` variable a hook, call-scoped command or run command is given.
    static let hookVariables: [(name: String, meaning: String)] = [
        ("TELWATCH_EVENT", "the event (every hook and call-scoped command)"),
        ("TELWATCH_SCOPE", "call-scoped commands: the scope that started it"),
        ("TELWATCH_CALL_ID", "call events: telwatch's id of the call"),
        ("TELWATCH_STATE", "the call's state"),
        ("TELWATCH_PREVIOUS_STATE", "its state before (empty at first sight)"),
        ("TELWATCH_DETAIL", "ringing, waiting, dialing, alerting, active or held (empty once disconnected)"),
        ("TELWATCH_DIRECTION", "incoming or outgoing"),
        ("TELWATCH_NUMBER", "the number, as the stack gives it: hostile text, never pass it to a shell"),
        ("TELWATCH_NAME", "the name the stack gives"),
        ("TELWATCH_CONTACT", "the name from --contacts (empty for none)"),
        ("TELWATCH_SCREENED", "screened hooks: what screening does to the call: reject, deflect, silence, ignore or allow"),
        ("TELWATCH_SCREENING_RULE", "screened hooks: the rule that decided, with its file and line"),
        ("TELWATCH_DEFLECT_TO", "screened hooks: where a deflect rule sends the call (empty for other rules)"),
        ("TELWATCH_SCREENING_COMMAND", "screened hooks: the name of the command a run rule runs (empty for other rules)"),
        ("TELWATCH_REASON", "why the call is in its state, where the stack says"),
        ("TELWATCH_BACKEND", "modemmanager or ofono"),
        ("TELWATCH_MODEM", "the modem's object path"),
        ("TELWATCH_MODEM_ID", "the modem's equipment id (IMEI), where the stack says (empty otherwise)"),
        ("TELWATCH_MODEM_NUMBER", "the modem's own number, where the stack says: like TELWATCH_NUMBER, never redacted here"),
        ("TELWATCH_OPERATOR", "the network operator's name, where the stack says"),
        ("TELWATCH_PATH", "the call's object path"),
        ("TELWATCH_INITIAL", "true when the call was live when telwatch started"),
        ("TELWATCH_MISSED", "true for a call that rang unanswered"),
        ("TELWATCH_MULTIPARTY", "true in a conference"),
        ("TELWATCH_RESUMED", "true when seen after a resume"),
        ("TELWATCH_CONNECTED_AT", "epoch seconds of connecting (empty if never connected)"),
        ("TELWATCH_DURATION", "seconds from first sight, or from connecting, to the end (empty while live)"),
        ("TELWATCH_LIVE_CALLS", "live calls after the event"),
        ("TELWATCH_RUN_ID", "the run (empty for none); the run command gets it too"),
        ("TELWATCH_RUN_REASON", "run hooks: why the run started (run-started) or ended; the run command: why it started"),
        ("TELWATCH_RUN_START_REASON", "run hooks: why the run started"),
        ("TELWATCH_RUN_HOLDER", "run hooks: the call that began the run"),
        ("TELWATCH_RUN_HOLDERS", "run hooks: the calls holding it"),
        ("TELWATCH_RUN_STARTED", "run hooks: epoch seconds of its start"),
        ("TELWATCH_RUN_DURATION", "run hooks: how long it lasted (empty for run-started)"),
        ("TELWATCH_LOCK", "run hooks: the inhibitor lock: off, pending, held, unavailable or released"),
        ("TELWATCH_STALE_PID", "run-stopped of a run a killed telwatch left: that telwatch's pid"),
        ("TELWATCH_TIME", "epoch seconds, now"),
    ]
}
