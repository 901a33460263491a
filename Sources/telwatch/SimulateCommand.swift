import DBus
import Glibc
import Loop
import Simulator

/// `telwatch simulate`: a fake ModemManager on a bus, driven by a script or by commands typed on
/// stdin, so hooks and pipelines can be tried without a modem.
enum SimulateCommand {
    static let help = """
    \(OptionHelp.usage(for: .simulate, operands: "[SCRIPT | -]"))

    Owns org.freedesktop.ModemManager1 on the bus (as the real daemon would: same paths, interfaces
    and signals) and plays SCRIPT, or reads commands from stdin when SCRIPT is '-' or absent.
    Then it keeps serving the bus until interrupted, or exits with --exit.
    Use a private or session bus: on the system bus a real ModemManager owns the name.

    \(SimulatorCommand.help)

    examples:
      telwatch simulate --bus session call.txt
      printf 'ring +15551234\\nsleep 2\\nanswer c1\\nsleep 5\\nremote-hangup c1\\n' | telwatch simulate --bus session --exit
    """

    /// What `simulate` was asked to do.
    private struct Invocation {
        var bus = BusAddress.session
        var modems = 1
        var exitWhenDone = false
        var scriptPath: String?

        /// Commands come from stdin: no script, or `-`.
        var readsInput: Bool { scriptPath == nil || scriptPath == "-" }
    }

    static func run(_ arguments: [String]) -> Int32 {
        let invocation: Invocation
        do {
            guard let parsed = try parse(arguments) else {
                LineWriter(fd: 1).write(help)
                return ExitStatus.success.code
            }
            invocation = parsed
        } catch {
            warn("\(error)")
            return ExitStatus.usage.code
        }
        let commands: [(line: Int, command: SimulatorCommand)]
        switch script(invocation) {
        case .success(let read): commands = read
        case .failure(let exit): return exit.status
        }
        do {
            return try play(commands, invocation)
        } catch let error as SimulatedModemManager.SimulationError {
            warn("simulate: \(error)")
            return ExitStatus.failure.code
        } catch let error as DBusError {
            warn("simulate: \(error)")
            return ExitStatus.busUnavailable.code
        } catch {
            warn("simulate: \(error)")
            return ExitStatus.failure.code
        }
    }

    /// The invocation; nil for `--help`.
    private static func parse(_ arguments: [String]) throws -> Invocation? {
        var invocation = Invocation()
        var cursor = ArgumentCursor(arguments)
        while let argument = cursor.next() {
            switch argument {
            case "--help", "-h":
                return nil
            case "--bus": invocation.bus = try Parse.bus(try cursor.value(for: argument))
            case "--modems":
                let text = try cursor.value(for: argument)
                guard let count = Int(text), (0...16).contains(count) else {
                    throw UsageError("--modems takes a number from 0 to 16, not '\(text)'")
                }
                invocation.modems = count
            case "--exit": try cursor.noValue(for: argument); invocation.exitWhenDone = true
            case _ where argument.hasPrefix("-") && argument != "-":
                throw UsageError("simulate: unknown option '\(argument)' (see telwatch simulate --help)")
            default:
                guard invocation.scriptPath == nil else { throw UsageError("simulate takes one script") }
                invocation.scriptPath = argument
            }
        }
        return invocation
    }

    /// The script file's commands (none when they come from stdin).
    private static func script(_ invocation: Invocation) -> Result<[(line: Int, command: SimulatorCommand)], ExitCode> {
        guard !invocation.readsInput, let scriptPath = invocation.scriptPath else { return .success([]) }
        do {
            return .success(try SimulatorCommand.parse(try SmallFile.text(scriptPath, limit: 1 << 20)))
        } catch let error as SimulatorCommand.ParseError {
            warn("\(scriptPath): \(error)")
        } catch {
            warn("cannot read \(scriptPath): \(error)")
        }
        return .failure(ExitCode(ExitStatus.usage.code))
    }

    /// Owns ModemManager's name and plays the commands (and stdin's) until interrupted, or, with
    /// `--exit`, until they are done. Returns the exit status.
    private static func play(_ commands: [(line: Int, command: SimulatorCommand)], _ invocation: Invocation) throws -> Int32 {
        let output = LineWriter(fd: 1)
        let loop = try EventLoop()
        let connection = try Connection(invocation.bus, loop: loop)
        let simulator = try SimulatedModemManager(connection: connection)
        let modems = invocation.modems
        for index in 0..<modems { try simulator.addModem(model: "Simulated Modem \(index)", announce: false) }
        try simulator.claimName()
        output.write("simulator: \(SimulatedModemManager.busName) on the \(invocation.bus) bus as \(connection.uniqueName), "
                     + "\(modems) modem\(modems == 1 ? "" : "s")")
        // What the script says (its numbers, its echo text) is text from outside: escaped.
        let player = ScriptPlayer(simulator: simulator, loop: loop) { output.write("simulator: " + TerminalText.escape($0)) }
        // Commands typed (or piped) on stdin are played as they arrive.
        let typed = invocation.readsInput
            ? TypedScript(player: player) { output.write("simulator: error: " + TerminalText.escape($0)) } : nil
        var status = ExitStatus.success.code
        player.onIdle = {
            if player.failure != nil || typed?.hadBadLines == true { status = ExitStatus.failure.code }
            if invocation.exitWhenDone && typed?.isDone != false { loop.stop() }
        }
        typed?.read(fd: 0, loop: loop)
        connection.onDisconnect = {
            warn("the bus went away")
            status = ExitStatus.busUnavailable.code
            loop.stop()
        }
        let signals = try loop.signals([SIGINT, SIGTERM]) { _ in loop.stop() }
        player.enqueue(commands)
        loop.run()
        signals.cancel()
        typed?.cancel()
        player.onIdle = nil
        connection.close()
        return status
    }
}
