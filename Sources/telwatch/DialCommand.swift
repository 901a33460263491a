/// `telwatch dial NUMBER [--modem PATH]`: asks the running service to place a call (its D-Bus
/// API, which refuses anything but dial characters and every emergency number before the stack
/// sees it) and prints the new call's id, for `hangup` and `tones`.
enum DialCommand {
    static func run(_ arguments: [String]) -> Int32 {
        var given: [String] = []
        var modem: String?
        let parsed = WatchArguments.parseOrExit(arguments, command: "dial", accepting: OptionTable.accepted(by: .dial),
                                                help: help) { argument, cursor in
            if argument == "--modem" {
                modem = try cursor.value(for: argument)
                return true
            }
            return Operand.take(argument, &cursor, into: &given)
        }
        let options: WatchOptions
        switch parsed {
        case .success(let value): options = value
        case .failure(let exit): return exit.status
        }
        guard given.count == 1, let number = given.first else {
            warn("dial takes one NUMBER, not \(given.count) operands (see telwatch dial --help)")
            return ExitStatus.usage.code
        }
        if let modem, modem.isEmpty {
            warn("dial: --modem needs a modem's object path, such as /org/freedesktop/ModemManager1/Modem/0")
            return ExitStatus.usage.code
        }
        let service: ServiceActs
        switch ServiceActs.open(options.apiBus ?? options.bus, command: "dial") {
        case .success(let opened): service = opened
        case .failure(let failure):
            warn(failure.message)
            return failure.status.code
        }
        defer { service.close() }
        do {
            LineWriter(fd: 1).write(TerminalText.field(try service.dial(number, modem: modem)))
            return ExitStatus.success.code
        } catch {
            warn(error.message)
            return error.status.code
        }
    }

    static let help = """
    \(OptionHelp.usage(for: .dial, operands: "NUMBER"))

    Places a call to NUMBER through the running telwatch (its D-Bus API, io.telwatch.Monitor1),
    on the modem --modem names (an object path, as telwatch status and the events' modem field
    give it), or on the one voice modem there is. NUMBER is dial characters only (digits, * and #,
    + first; spaces, dashes, dots and parentheses are dropped); an emergency number is never
    dialled this way. Prints the new call's id on stdout once the stack has started the call.

    \(OptionHelp.list(for: .dial))
    \(ActCommand.exitStatuses)

    examples:
      call=$(telwatch dial +15550123) && telwatch tones "$call" 1234# && telwatch hangup "$call"
      telwatch dial --modem /org/freedesktop/ModemManager1/Modem/0 '+1 555 0123'
    """
}
