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

    \(OptionHelp.groupedList(for: .watch))

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
