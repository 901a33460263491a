import Glibc

/// `telwatch answer|hangup [CALL]`, `telwatch deflect [CALL] NUMBER`, `telwatch tones [CALL]
/// DIGITS`: asks the running service to act on one of its live calls (its D-Bus API, which checks
/// every number and asks the stack), and says in one line what came of it, with an exit status of
/// its own for each kind of refusal (`ExitStatus`).
enum ActCommand {
    /// The operands after the options, split as the command takes them.
    struct Operands: Equatable {
        /// The call named, or nil for the one the act takes by default.
        var call: String?
        var act: RemoteAct
    }

    static func run(_ command: TelwatchCommand, _ arguments: [String]) -> Int32 {
        var given: [String] = []
        let parsed = WatchArguments.parseOrExit(arguments, command: command.rawValue,
                                                accepting: OptionTable.accepted(by: command), help: help(command)) {
            argument, cursor in
            Operand.take(argument, &cursor, into: &given)
        }
        let options: WatchOptions
        switch parsed {
        case .success(let value): options = value
        case .failure(let exit): return exit.status
        }
        let operands: Operands
        do { operands = try split(command, given) } catch {
            warn("\(error)")
            return ExitStatus.usage.code
        }
        let bus = options.apiBus ?? options.bus
        let service: ServiceActs
        switch ServiceActs.open(bus, command: command.rawValue) {
        case .success(let opened): service = opened
        case .failure(let failure): return said(failure)
        }
        defer { service.close() }
        do {
            let calls = try service.liveCalls()
            let call: RemoteCall
            switch CallChoice.choose(operands.call, among: calls, default: operands.act.defaultCall) {
            case .success(let chosen): call = chosen
            case .failure(let failure): return said(ActFailure(status: failure.status, message: failure.message(command.rawValue)))
            }
            try service.perform(operands.act, on: call)
            LineWriter(fd: 1).write(operands.act.done(call))
            return ExitStatus.success.code
        } catch {
            return said(error)
        }
    }

    /// `[CALL]` for answer and hangup; `[CALL] NUMBER` for deflect; `[CALL] DIGITS` for tones.
    static func split(_ command: TelwatchCommand, _ given: [String]) throws(UsageError) -> Operands {
        let see = "(see telwatch \(command.rawValue) --help)"
        switch command {
        case .answer, .hangup:
            guard given.count <= 1 else {
                throw UsageError("\(command.rawValue) takes one CALL at most, not \(given.count) \(see)")
            }
            return Operands(call: given.first, act: command == .answer ? .answer : .hangUp)
        case .deflect, .tones:
            let what = command == .deflect ? "NUMBER" : "DIGITS"
            guard (1...2).contains(given.count), let last = given.last else {
                throw UsageError("\(command.rawValue) takes [CALL] \(what), not \(given.count) operands \(see)")
            }
            let call = given.count == 2 ? given[0] : nil
            return Operands(call: call, act: command == .deflect ? .deflect(to: last) : .tones(last))
        default:
            throw UsageError("\(command.rawValue) is not an act on a call")
        }
    }

    private static func said(_ failure: ActFailure) -> Int32 {
        warn(failure.message)
        return failure.status.code
    }

    static func help(_ command: TelwatchCommand) -> String {
        let (operands, what, examples): (String, String, [String])
        switch command {
        case .answer:
            (operands, what, examples) = ("[CALL]", "Answers a ringing call; a waiting one puts the connected call on hold.",
                                          ["telwatch answer", "telwatch answer 407e08ae"])
        case .hangup:
            (operands, what, examples) = ("[CALL]", "Hangs a call up; a ringing call is rejected.",
                                          ["telwatch hangup", "telwatch hangup --api-bus session 407e08ae"])
        case .deflect:
            (operands, what, examples) = ("[CALL] NUMBER", "Sends a ringing call on to NUMBER unanswered "
                                          + "(voicemail, another phone).",
                                          ["telwatch deflect +15559876543", "telwatch deflect 407e08ae '+1 555 987-6543'"])
        default:
            (operands, what, examples) = ("[CALL] DIGITS", "Sends DTMF tones (0-9 * # A-D) on a connected call, "
                                          + "in order.", ["telwatch tones 1234#", "telwatch tones 407e08ae '*9'"])
        }
        let which = command == .tones ? "the one active call (connected, not held)"
            : "the one call that rings (incoming or waiting)"
        return """
        \(OptionHelp.usage(for: command, operands: operands))

        \(what)
        Asks the running telwatch (its D-Bus API, io.telwatch.Monitor1), which checks every number
        (dial characters only, never an emergency number) and asks the stack; a line on stdout says
        what was done once the stack has answered. CALL is a call's id, or its start as telwatch
        status shows it; left out, \(which).

        \(OptionHelp.list(for: command))
        \(exitStatuses)

        examples:
        \(examples.map { "  " + $0 }.joined(separator: "\n"))
        """
    }

    /// The exit statuses of every act, `answer --help` to `dial --help`.
    static let exitStatuses = """
    exit status: 0 done; 1 the service refused otherwise; 2 bad usage; 3 no service, or it did not
    answer; 6 no such call (none rings, or no such modem); 7 the call is ambiguous (several ring,
    or several modems); 8 the call does not ring; 9 not permitted (the bus policy or polkit);
    10 a refused number (not dial characters, or an emergency number); 11 the stack refused, did
    not answer in time, or went away.
    """
}

/// The operands of an act command: every word that is not an option, and all after `--`.
enum Operand {
    static func take(_ argument: String, _ cursor: inout ArgumentCursor, into given: inout [String]) -> Bool {
        if argument == "--" {
            given += cursor.rest()
            return true
        }
        guard !argument.hasPrefix("-") else { return false }
        given.append(argument)
        return true
    }
}
