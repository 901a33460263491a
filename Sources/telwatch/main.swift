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

let arguments = Array(CommandLine.arguments.dropFirst())
let rest = Array(arguments.dropFirst())
let status: Int32
switch arguments.first {
case "--version", "-V": LineWriter(fd: 1).write("telwatch \(version)"); status = ExitStatus.success.code
case "--help", "-h", "help": LineWriter(fd: 1).write(Help.main); status = ExitStatus.success.code
case "--generate": status = ReferenceCommand.run(rest)
case "watch": status = runWatch(rest)
case "status": status = StatusCommand.run(rest)
case "events": status = EventsCommand.run(rest)
case "doctor": status = DoctorCommand.run(rest)
case "log": status = LogCommand.run(rest)
case "block": status = ScreeningListCommand.run(.block, rest)
case "allow": status = ScreeningListCommand.run(.allow, rest)
case "simulate": status = SimulateCommand.run(rest)
case "demo": status = DemoCommand.run(rest)
case let first? where !first.hasPrefix("-"):
    warn("unknown command '\(first)' (commands: \(TelwatchCommand.allCases.map(\.rawValue).joined(separator: ", ")); see telwatch --help)")
    status = ExitStatus.usage.code
default: status = runWatch(arguments)
}
exit(status)
