/// Options as every command reads them: `telwatch [watch]` takes them all; `status`, `doctor` and
/// `demo` take the ones they name, with the same meaning, plus their own (`own`). The config file
/// is read first wherever `--config` stands, so every flag overrides it. Returns nil for `--help`.
enum WatchArguments {
    static func parse(
        _ arguments: [String], command: String? = nil, accepting accepted: Set<String>? = nil,
        own: (String, inout ArgumentCursor) throws -> Bool = { _, _ in false }
    ) throws -> WatchOptions? {
        let seeHelp = "(see telwatch \(command.map { $0 + " " } ?? "")--help)"
        var options = WatchOptions()
        var scan = ArgumentCursor(arguments)
        while let argument = scan.next() {
            if argument == "--" { break }
            if argument == "--config", accepted?.contains(argument) ?? true {
                try options.load(configFile: try scan.value(for: argument))
            }
        }
        var cursor = ArgumentCursor(arguments)
        var verbosityFlag: (flag: String, verbosity: WatchOptions.Verbosity)?
        while let argument = cursor.next() {
            if argument == "--help" || argument == "-h" { return nil }
            if try own(argument, &cursor) { continue }
            if let accepted, !accepted.contains(argument) {
                throw UsageError("\(command.map { $0 + ": " } ?? "")unknown option \(Parse.quoted(argument)) \(seeHelp)")
            }
            switch argument {
            case "--config": _ = try cursor.value(for: argument)
            case "--json", "--redact-numbers", "--wakelock", "--sleep-delay-lock",
                 "--feedback", "--call-audio", "--notify":
                try cursor.noValue(for: argument)
                try options.set(String(argument.dropFirst(2)), "true")
            case "--no-history":
                try cursor.noValue(for: argument)
                options.history = false
            case "--no-api":
                try cursor.noValue(for: argument)
                options.api = false
            case "--quiet", "-q", "--verbose", "-v":
                try cursor.noValue(for: argument)
                let wanted: WatchOptions.Verbosity = argument == "--quiet" || argument == "-q" ? .quiet : .verbose
                if let earlier = verbosityFlag, earlier.verbosity != wanted {
                    throw UsageError("\(earlier.flag) and \(argument) contradict each other: give one")
                }
                verbosityFlag = (argument, wanted)
                options.verbosity = wanted
            case "--run":
                let first = try cursor.value(for: argument)
                options.runCommand = first == "--" ? cursor.rest() : [first]
                guard !options.runCommand.isEmpty else { throw UsageError("--run needs a command: --run -- CMD ARGS…") }
            case "--backend", "--bus", "--inhibit", "--hooks", "--lease", "--heartbeat", "--hook-timeout",
                 "--stop-grace", "--state-dir", "--resume-grace", "--history-keep", "--session-bus",
                 "--contacts", "--api-bus",
                 "--mqtt", "--mqtt-topic", "--mqtt-credentials", "--mqtt-ca", "--mqtt-cert", "--mqtt-key":
                try options.set(String(argument.dropFirst(2)), try cursor.value(for: argument))
            case "--while":
                // `--while 'ringing=fbcli -E phone-incoming-call'`: the config file's `while.ringing = …`.
                let value = try cursor.value(for: argument)
                guard let equals = value.firstIndex(of: "=") else {
                    throw UsageError("--while takes SCOPE=COMMAND ARGS…, such as 'ringing=fbcli -E phone-incoming-call', "
                                     + "not \(Parse.quoted(value))")
                }
                try options.set("while." + value[..<equals], String(value[value.index(after: equals)...]))
            case "--mqtt-password", "--mqtt-user":
                throw UsageError("\(argument) is not taken on the command line, where ps shows it: set it in the "
                                 + "config file or give --mqtt-credentials FILE")
            case "--":
                throw UsageError("unexpected '--' (the run command goes after --run: --run -- CMD ARGS…)")
            default:
                throw UsageError("\(command.map { $0 + ": " } ?? "")unknown option \(Parse.quoted(argument)) \(seeHelp)")
            }
        }
        return options
    }

    /// Parses a command's options; on `--help` prints `help`, on a mistake says so: either way
    /// the exit status comes back instead of options.
    static func parseOrExit(
        _ arguments: [String], command: String? = nil, accepting accepted: Set<String>? = nil, help: String,
        own: (String, inout ArgumentCursor) throws -> Bool = { _, _ in false }
    ) -> Result<WatchOptions, ExitCode> {
        do {
            guard let options = try parse(arguments, command: command, accepting: accepted, own: own) else {
                LineWriter(fd: 1).write(help)
                return .failure(ExitCode(ExitStatus.success))
            }
            return .success(options)
        } catch {
            warn("\(error)")
            return .failure(ExitCode(ExitStatus.usage))
        }
    }
}

/// An exit status carried where a command stops early.
struct ExitCode: Error {
    let status: Int32
    init(_ status: Int32) { self.status = status }
}

enum Help {
    static let main = """
    usage: telwatch [watch] [OPTIONS]
           telwatch status [--json] [--bus BUS] [--backend B] [--state-dir DIR]
           telwatch events [--json] [--bus BUS] [--api-bus system|session]
           telwatch doctor [--bus BUS] [--backend B] [--inhibit WHAT[:MODE]] [--hooks DIR]
           telwatch log [--missed] [--unseen] [--since D|DATE] [--number N] [--limit N] [--json|--csv]
                        [--mark-seen]
           telwatch simulate [--bus BUS] [--modems N] [--exit] [SCRIPT | -]
           telwatch demo [--json] [--speed X]
           telwatch --version | --help | COMMAND --help

    Follows the voice calls of ModemManager and oFono over D-Bus and prints one line per event:
    incoming, dialing, connected, disconnected, missed, updated. While any call is live it holds a
    background run: a logind inhibitor lock (the device does not suspend mid-call), your run
    command and your hooks. After every resume it reads all calls again and reports what changed
    while the system slept (flagged resumed), calls that rang unseen as missed. Every call is
    recorded in the state directory's history.db; telwatch log lists them.

    watch options:
      --backend auto|modemmanager|ofono  which stacks to follow (default auto: whichever run)
      --bus system|session|ADDRESS       the bus (default system)
      --json                             JSON Lines instead of text (schema in the README)
      --inhibit WHAT[:MODE]|none         what a run inhibits (default sleep:block; e.g. sleep:idle:block)
      --hooks DIR                        run DIR/EVENT and DIR/EVENT.d/* for each event
      --hook-timeout DURATION            kill a hook still running after this (default 30s)
      --while SCOPE=CMD ARGS…            run CMD while any call is in SCOPE: ringing, waiting,
                                         dialing, alerting, active, held or live (any call); one
                                         argument, split as sh would, no shell; stopped with
                                         SIGTERM the moment no call is in SCOPE (SIGKILL after
                                         --stop-grace); may be given several times
      --contacts FILE                    names for numbers: vCard (FN, TEL) or NUMBER<TAB>NAME;
                                         read again whenever the file changes
      --run -- CMD ARGS…                 run CMD for the whole of each run (no shell); stopped with
                                         SIGTERM, then SIGKILL after --stop-grace (default 5s)
      --lease DURATION|none              a run not renewed for this long ends itself (default 4h)
      --heartbeat DURATION               a heartbeat event this often while a run lives (default none)
      --wakelock                         also hold a kernel wakelock during runs, where there is one
      --sleep-delay-lock                 hold a sleep delay lock while awake, so telwatch records a
                                         sleep before it happens (released at once, retaken on resume)
      --resume-grace DURATION|none       after a resume, keep the system awake this long so a call
                                         that woke it is handled (default none; e.g. 10s)
      --state-dir DIR                    where the live run and the call history are kept (default
                                         $STATE_DIRECTORY, $XDG_STATE_HOME/telwatch or
                                         ~/.local/state/telwatch)
      --no-history                       do not record calls in DIR/history.db (telwatch log)
      --history-keep DURATION|0          drop calls first seen longer ago than this (default 365d;
                                         0 keeps every call)
      --feedback                         ring and vibrate through feedbackd while a call rings
      --call-audio                       call audio mode through callaudiod while a call is connected
      --notify                           a desktop notification for each missed call
      --session-bus ADDRESS              the phone session's bus for those (default
                                         $DBUS_SESSION_BUS_ADDRESS)
      --redact-numbers                   show only the last two digits of phone numbers (API and MQTT too)
      --no-api                           do not own io.telwatch.Monitor1, the D-Bus API that
                                         `telwatch status` and `telwatch events` ask
      --api-bus system|session           the API's bus (default: the bus watched)
      --mqtt mqtt[s]://HOST[:PORT]       also publish to an MQTT broker (README "MQTT"): retained
                                         TOPIC/status, /calls, /run, /state; every event on /events
      --mqtt-topic TOPIC                 the topics' root (default telwatch/%h, %h the host name)
      --mqtt-credentials FILE            the MQTT user (line 1) and password (line 2); never on argv
      --mqtt-ca FILE, --mqtt-cert FILE, --mqtt-key FILE   TLS: the broker's CA, a client certificate
      --quiet | --verbose                less or more on stdout and stderr
      --config FILE                      KEY = VALUE settings (the long option names); flags win
    DURATION: seconds, or with a unit: 90s, 5m, 1h.
    signals: SIGINT/SIGTERM stop (the run ends, the lock is released); SIGHUP reloads the
             configuration (hooks, verbosity, redaction at once; the rest at the next start);
             SIGUSR1 prints a stats line.

    exit status: 0 stopped by SIGINT/SIGTERM or done; 1 failure (log: the history cannot be read);
                 2 bad usage or config; 3 the bus is unreachable or was lost (restart me);
                 4 doctor found problems; 5 another telwatch owns io.telwatch.Monitor1 (--no-api
                 runs a second one)

    examples:
      telwatch demo                                  see it work, with no modem at all
      telwatch --json | jq -c 'select(.event=="incoming") | .number'
      telwatch --hooks ~/.config/telwatch/hooks --run -- pw-play ~/keepalive.wav
      telwatch doctor
      telwatch log --missed --unseen
    """

    static let log = """
    usage: telwatch log [--missed] [--unseen] [--since DURATION|DATE] [--number N] [--limit N]
                        [--json | --csv] [--mark-seen] [--redact-numbers] [--state-dir DIR] [--config FILE]

    The calls telwatch recorded (DIR/history.db), newest first: when, the direction, the number,
    answered, missed, unanswered, live or unknown (telwatch stopped before the call ended), how
    long, and the call's id. Works while telwatch runs, and for any user who may read DIR.

      --missed                 only missed calls
      --unseen                 only missed calls not marked seen yet
      --since DURATION|DATE    calls first seen since then: 2h, 7d, 2026-11-29, 2026-11-29 08:00
      --number N               calls whose number contains N
      --limit N                at most N calls
      --json                   JSON Lines with the event stream's key names (and unseen)
      --csv                    CSV (RFC 4180) with the same columns; a cell that a spreadsheet
                               would run as a formula (=, +, -, @) starts with a '
      --mark-seen              mark the missed calls listed as seen
    exit status: 0 listed (also when nothing matched); 1 the history cannot be read; 2 bad usage.

    examples:
      telwatch log --missed --unseen --mark-seen
      telwatch log --since 7d --json | jq -r 'select(.missed) | .number'
    """

    static let status = """
    usage: telwatch status [--json] [--bus BUS] [--api-bus system|session] [--backend auto|modemmanager|ofono]
                           [--state-dir DIR]

    Asks the running telwatch (its D-Bus API, io.telwatch.Monitor1): the calls live now, with the
    service's ids and times, the background run (held since, lease left), and the last sleep and
    resume it saw (and whether a sleep came while a call was live). When no telwatch runs it says
    so, then reads the stacks itself and shows the run record the last one left.
    Exit status 3 if the bus cannot be reached.

    examples:
      telwatch status
      telwatch status --json | jq '.calls[].number'
    """

    static let doctor = """
    usage: telwatch doctor [--bus BUS] [--backend B] [--inhibit WHAT[:MODE]|none] [--hooks DIR] [--state-dir DIR]
                           [--sleep-delay-lock] [--no-history] [--feedback] [--call-audio] [--notify]
                           [--session-bus ADDRESS] [--config FILE]

    Checks what telwatch needs: the bus, which stacks run and how many modems have voice, whether
    oFono's policy lets this user read calls, whether an inhibitor lock can be taken, whether the
    hooks are executable, whether the call history can be read and written (not damaged, not of a
    newer telwatch), the last sleep and resume (✘ if the last sleep came while a call was live),
    and with a phone action on, whether its service is on the session bus (or can be started).
    One line each, ✔ or ✘ with the fix. Exit status 4 if anything is ✘.
    """

    static let demo = """
    usage: telwatch demo [--json] [--speed X] [--hooks DIR] [--redact-numbers] [--verbose]
                         [--feedback] [--call-audio] [--notify]

    Starts a private dbus-daemon with telwatch's built-in ModemManager simulator and a stand-in
    logind, plays a short story (an incoming call answered, a second call waiting, a missed call,
    an outgoing call) and runs the real watch pipeline against it. Needs dbus-daemon; no modem.
    --speed 10 plays it ten times faster. --feedback, --call-audio and --notify turn the phone
    actions on against stand-ins of feedbackd, callaudiod and a notification server on the same
    bus, which say what they are asked.

    examples:
      telwatch demo
      telwatch demo --json | jq -c 'select(.event=="missed")'
      telwatch demo --hooks ~/.config/telwatch/hooks --verbose
      telwatch demo --feedback --call-audio --notify
    """
}
