// telwatch: follows ModemManager and oFono voice calls and holds a background run while any is live.
import Glibc

let version = Release.version

// A closed stdout is noticed as EPIPE (and ends the watch cleanly), not as a fatal signal.
signal(SIGPIPE, SIG_IGN)
// A file size limit (ulimit -f) makes a write fail with EFBIG, which the history reports as a full
// disk, instead of killing the daemon mid-call.
signal(SIGXFSZ, SIG_IGN)

func runWatch(_ arguments: [String]) -> Int32 {
    switch WatchArguments.parseOrExit(arguments, help: Help.main) {
    case .success(let options):
        // SIGHUP reads the same arguments (and so the config file) again.
        return WatchCommand.run(options) { try WatchArguments.parse(arguments) }
    case .failure(let exit): return exit.status
    }
}

extension TelwatchCommand {
    /// Runs the command with the arguments after its name: one case each, so a command added to
    /// the table cannot be left without its code.
    func run(_ arguments: [String]) -> Int32 {
        switch self {
        case .watch: return runWatch(arguments)
        case .status: return StatusCommand.run(arguments)
        case .events: return EventsCommand.run(arguments)
        case .answer, .hangup, .deflect, .tones: return ActCommand.run(self, arguments)
        case .dial: return DialCommand.run(arguments)
        case .doctor: return DoctorCommand.run(arguments)
        case .log: return LogCommand.run(arguments)
        case .block: return ScreeningListCommand.run(.block, arguments)
        case .allow: return ScreeningListCommand.run(.allow, arguments)
        case .simulate: return SimulateCommand.run(arguments)
        case .demo: return DemoCommand.run(arguments)
        }
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(arguments.dropFirst())
let status: Int32
switch arguments.first {
case "--version", "-V": LineWriter(fd: 1).write("telwatch \(version)"); status = ExitStatus.success.code
case "--help", "-h", "help": LineWriter(fd: 1).write(Help.main); status = ExitStatus.success.code
case "--generate": status = ReferenceCommand.run(rest)
case let first? where !first.hasPrefix("-"):
    if let command = TelwatchCommand(rawValue: first) {
        status = command.run(rest)
    } else {
        warn("unknown command '\(first)' (commands: \(TelwatchCommand.allCases.map(\.rawValue).joined(separator: ", ")); see telwatch --help)")
        status = ExitStatus.usage.code
    }
default: status = runWatch(arguments)
}
exit(status)
