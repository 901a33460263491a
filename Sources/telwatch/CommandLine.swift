/// Options as every command reads them: `telwatch [watch]` takes them all; `status`, `doctor` and
/// `demo` take the ones they name, with the same meaning, plus their own (`own`). The config file
/// is read first wherever `--config` stands, so every flag overrides it; without one, `service`
/// (the service's configuration) is. Returns nil for `--help`.
enum WatchArguments {
    static func parse(
        _ arguments: [String], command: String? = nil, accepting accepted: Set<String>? = nil,
        service: ServiceConfiguration? = nil, own: (String, inout ArgumentCursor) throws -> Bool = { _, _ in false }
    ) throws -> WatchOptions? {
        let seeHelp = "(see telwatch \(command.map { $0 + " " } ?? "")--help)"
        // `watch` takes every option of the table, and knows the config-only ones and a stray `--`
        // to say why not.
        let accepted = accepted ?? OptionTable.accepted(by: .watch).union(OptionTable.refusedOnCommandLine).union(["--"])
        var options = WatchOptions()
        var scan = ArgumentCursor(arguments)
        while let argument = scan.next() {
            if argument == "--" { break }
            if argument == "--config", accepted.contains(argument) {
                try options.load(configFile: try scan.value(for: argument))
            }
        }
        if let service, !ServiceConfiguration.isConfigGiven(arguments),
           !arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
            try service.load(into: &options)
        }
        var cursor = ArgumentCursor(arguments)
        var verbosityFlag: (flag: String, verbosity: WatchOptions.Verbosity)?
        while let argument = cursor.next() {
            if argument == "--help" || argument == "-h" { return nil }
            if try own(argument, &cursor) { continue }
            if !accepted.contains(argument) {
                throw UsageError("\(command.map { $0 + ": " } ?? "")unknown option \(Parse.quoted(argument)) \(seeHelp)")
            }
            switch argument {
            case "--config": _ = try cursor.value(for: argument)
            case "--json", "--redact-numbers", "--wakelock", "--sleep-delay-lock",
                 "--feedback", "--call-audio", "--notify", "--mqtt-commands":
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
                 "--contacts", "--screening", "--api-bus",
                 "--mqtt", "--mqtt-topic", "--mqtt-credentials", "--mqtt-ca", "--mqtt-cert", "--mqtt-key",
                 "--mqtt-keepalive", "--mqtt-reconnect-max", "--mqtt-outbox-limit", "--mqtt-outbox-max-age",
                 "--mqtt-max-message", "--mqtt-homeassistant", "--mqtt-discovery-prefix":
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
        service: ServiceConfiguration? = nil, own: (String, inout ArgumentCursor) throws -> Bool = { _, _ in false }
    ) -> Result<WatchOptions, ExitCode> {
        do {
            guard let options = try parse(arguments, command: command, accepting: accepted, service: service,
                                          own: own) else {
                LineWriter(fd: 1).write(help)
                return .failure(ExitCode(ExitStatus.success.code))
            }
            return .success(options)
        } catch {
            warn("\(error)")
            return .failure(ExitCode(ExitStatus.usage.code))
        }
    }
}

/// An exit status carried where a command stops early.
struct ExitCode: Error {
    let status: Int32
    init(_ status: Int32) { self.status = status }
}

/// Every command's `--help`: the usage lines and option lists come from `OptionTable`, the exit
/// statuses and signals from `ManualFacts`, so they say what the parser and the man page say.
enum Help {
    static let description = """
    Follows the voice calls of ModemManager and oFono over D-Bus and prints one line per event:
    incoming, dialing, connected, disconnected, missed, updated. While any call is live it holds a
    background run: a logind inhibitor lock (the device does not suspend mid-call), your run
    command and your hooks. After every resume it reads all calls again and reports what changed
    while the system slept (flagged resumed), calls that rang unseen as missed. Every call is
    recorded in the state directory's history.db; telwatch log lists them.
    """

    static let examples = """
    telwatch demo                                  see it work, with no modem at all
    telwatch --json | jq -c 'select(.event=="incoming") | .number'
    telwatch --hooks ~/.config/telwatch/hooks --run -- pw-play ~/keepalive.wav
    telwatch doctor
    telwatch log --missed --unseen
    """

    /// `  NAME  meaning` lines, the meanings in one column and wrapped.
    static func table(_ rows: [(String, String)]) -> String {
        let column = (rows.map { $0.0.count }.max() ?? 0) + 4
        return rows.map { name, meaning in
            let lines = OptionHelp.wrap(meaning, width: OptionHelp.width - column)
            let pad = String(repeating: " ", count: column)
            return "  " + name + String(repeating: " ", count: column - 2 - name.count) + lines[0]
                + lines.dropFirst().map { "\n" + pad + $0 }.joined()
        }.joined(separator: "\n")
    }

    static let main = """
    usage: telwatch [watch] [OPTIONS]
           telwatch COMMAND [OPTIONS]    (telwatch COMMAND --help for its options)
           telwatch --version | --help

    \(description)

    commands:
    \(table(TelwatchCommand.allCases.map { ($0.rawValue, $0.summary) }))

    watch options:
    \(OptionHelp.list(for: .watch))
    DURATION: digits with an optional fraction, then ms, s, m, h, d or w (90s, 1.5h, 7d); a bare
    number is seconds; up to a year. Settings of the config file: telwatch.conf(5).

    signals:
    \(table(ManualFacts.signals.map { ($0.name, $0.meaning) }))

    exit status:
    \(table(ManualFacts.exitStatuses.map { (String($0.code), $0.meaning) }))

    examples:
    \(examples.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
    """

    static let log = """
    \(OptionHelp.usage(for: .log))

    The calls telwatch recorded (DIR/history.db), newest first: when, the direction, the number,
    answered, missed, unanswered, live or unknown (telwatch stopped before the call ended), how
    long, and the call's id. Works while telwatch runs, and for any user who may read DIR.

    \(OptionHelp.list(for: .log))
    exit status: 0 listed (also when nothing matched); 1 the history cannot be read; 2 bad usage.

    examples:
      telwatch log --missed --unseen --mark-seen
      telwatch log --since 7d --json | jq -r 'select(.missed) | .number'
    """

    static let status = """
    \(OptionHelp.usage(for: .status))

    Asks the running telwatch (its D-Bus API, io.telwatch.Monitor1): the calls live now, with the
    service's ids and times, the background run (held since, lease left), and the last sleep and
    resume it saw (and whether a sleep came while a call was live). When no telwatch runs it says
    so, then reads the stacks itself and shows the run record the last one left: held, left by a
    telwatch that is gone (killed before it could end the run), or not readable by this user (the
    state directory is for root and the service's group).
    Exit status 3 if the bus cannot be reached.

    \(OptionHelp.list(for: .status))

    examples:
      telwatch status
      telwatch status --json | jq '.calls[].number'
    """

    static let doctor = """
    \(OptionHelp.usage(for: .doctor))

    Checks what telwatch needs: the bus, which stacks run and how many modems have voice, whether
    oFono's policy lets this user read calls, whether an inhibitor lock can be taken, whether the
    hooks are executable, whether the call history can be read and written (not damaged, not of a
    newer telwatch), the last sleep and resume (✘ if the last sleep came while a call was live),
    with a phone action on, whether its service is on the session bus (or can be started), and
    with --screening, whether the rules file parses and whether the stack lets this user hang up
    (ModemManager: polkit's org.freedesktop.ModemManager1.Voice; oFono: the bus's policy).
    One line each, ✔ or ✘ with the fix. Exit status 4 if anything is ✘; 3 if the bus cannot be
    reached (as for every command; nothing else is checked then). As root, --user NAME
    checks as the account the service runs as (sudo telwatch doctor --user telwatch).

    \(OptionHelp.list(for: .doctor))
    """

    /// `telwatch block --help` and `telwatch allow --help`.
    static func screeningList(_ command: TelwatchCommand) -> String {
        let line = command == .block ? "block NUMBER" : "allow NUMBER"
        let opposite = command == .block ? "allow" : "block"
        return """
        \(OptionHelp.usage(for: command, operands: "NUMBER…"))

        Puts each NUMBER (or prefix, such as +1900*) on the \(command.rawValue) list of the screening rules
        file that telwatch watch reads (--screening FILE, or screening = FILE in the --config file; given
        neither, the service's: as root, the one /etc/telwatch/telwatch.conf names; as another user, the
        user unit's ~/.config/telwatch/screening.conf):
        appends a line `\(line)` and takes the number out of the \(opposite) lines, so block and allow
        undo each other. Every other line stays as it was. The file is replaced by a rename, which a
        running telwatch reads at once. A NUMBER is checked as a list file's line is (docs/screening.md).

        \(OptionHelp.list(for: command))
        exit status: 0 done (also when a number was listed already); 1 the file cannot be read or
        written, or the daemon would not load it (it does not parse, or the edit would make it larger
        than 1048576 bytes): nothing is written; 2 bad usage, a bad NUMBER or no rules file.

        examples:
          sudo telwatch \(command.rawValue) +19005550100
          telwatch \(command.rawValue) --screening ~/.config/telwatch/screening.conf '+1900*' 0171-1234567
        """
    }

    static let demo = """
    \(OptionHelp.usage(for: .demo))

    Starts a private dbus-daemon with telwatch's built-in ModemManager simulator and a stand-in
    logind, plays a short story (an incoming call answered, a second call waiting, a missed call,
    an outgoing call) and runs the real watch pipeline against it. Needs dbus-daemon; no modem.
    --speed 10 plays it ten times faster. --feedback, --call-audio and --notify turn the phone
    actions on against stand-ins of feedbackd, callaudiod and a notification server on the same
    bus, which say what they are asked.

    \(OptionHelp.list(for: .demo))

    examples:
      telwatch demo
      telwatch demo --json | jq -c 'select(.event=="missed")'
      telwatch demo --hooks ~/.config/telwatch/hooks --verbose
      telwatch demo --feedback --call-audio --notify
    """
}
