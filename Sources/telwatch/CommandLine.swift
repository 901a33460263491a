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
    /// the exit status comes back instead of options. `help` is made only when asked for: the
    /// option table's wrapped text costs a daemon's start several million instructions.
    static func parseOrExit(
        _ arguments: [String], command: String? = nil, accepting accepted: Set<String>? = nil,
        help: @autoclosure () -> String,
        service: ServiceConfiguration? = nil, own: (String, inout ArgumentCursor) throws -> Bool = { _, _ in false }
    ) -> Result<WatchOptions, ExitCode> {
        do {
            guard let options = try parse(arguments, command: command, accepting: accepted, service: service,
                                          own: own) else {
                LineWriter(fd: 1).write(help())
                return .failure(ExitCode(ExitStatus.success.code))
            }
            return .success(options)
        } catch {
            warn("\(error)")
            return .failure(ExitCode(ExitStatus.usage.code))
        }
    }
}
