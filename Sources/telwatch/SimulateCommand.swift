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

    static func run(_ arguments: [String]) -> Int32 {
        var bus = BusAddress.session
        var modems = 1
        var exitWhenDone = false
        var scriptPath: String?
        var cursor = ArgumentCursor(arguments)
        do {
            while let argument = cursor.next() {
                switch argument {
                case "--help", "-h":
                    LineWriter(fd: 1).write(help)
                    return ExitStatus.success.code
                case "--bus": bus = try Parse.bus(try cursor.value(for: argument))
                case "--modems":
                    let text = try cursor.value(for: argument)
                    guard let count = Int(text), (0...16).contains(count) else {
                        throw UsageError("--modems takes a number from 0 to 16, not '\(text)'")
                    }
                    modems = count
                case "--exit": try cursor.noValue(for: argument); exitWhenDone = true
                case _ where argument.hasPrefix("-") && argument != "-":
                    throw UsageError("simulate: unknown option '\(argument)' (see telwatch simulate --help)")
                default:
                    guard scriptPath == nil else { throw UsageError("simulate takes one script") }
                    scriptPath = argument
                }
            }
        } catch {
            warn("\(error)")
            return ExitStatus.usage.code
        }

        var commands: [(line: Int, command: SimulatorCommand)] = []
        if let scriptPath, scriptPath != "-" {
            do {
                commands = try SimulatorCommand.parse(try SmallFile.text(scriptPath, limit: 1 << 20))
            } catch let error as SimulatorCommand.ParseError {
                warn("\(scriptPath): \(error)")
                return ExitStatus.usage.code
            } catch {
                warn("cannot read \(scriptPath): \(error)")
                return ExitStatus.usage.code
            }
        }

        let output = LineWriter(fd: 1)
        do {
            let loop = try EventLoop()
            let connection = try Connection(bus, loop: loop)
            let simulator = try SimulatedModemManager(connection: connection)
            for index in 0..<modems { try simulator.addModem(model: "Simulated Modem \(index)", announce: false) }
            try simulator.claimName()
            output.write("simulator: \(SimulatedModemManager.busName) on the \(bus) bus as \(connection.uniqueName), "
                         + "\(modems) modem\(modems == 1 ? "" : "s")")
            // What the script says (its numbers, its echo text) is text from outside: escaped.
            let player = ScriptPlayer(simulator: simulator, loop: loop) { output.write("simulator: " + TerminalText.escape($0)) }
            var status = ExitStatus.success.code
            var inputDone = scriptPath != nil && scriptPath != "-"
            var badLines = false
            player.onIdle = {
                if player.failure != nil || badLines { status = ExitStatus.failure.code }
                if exitWhenDone && inputDone { loop.stop() }
            }
            var stdinSource: IOSource?
            if !inputDone {
                var pending: [UInt8] = []
                var lineNumber = 0
                // Commands typed (or piped) on stdin are played as they arrive.
                func take(_ bytes: ArraySlice<UInt8>, atEnd: Bool) {
                    pending += bytes
                    if atEnd && !pending.isEmpty && pending.last != UInt8(ascii: "\n") { pending.append(UInt8(ascii: "\n")) }
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        lineNumber += 1
                        let line = String(decoding: pending[..<newline], as: UTF8.self)
                        pending.removeSubrange(...newline)
                        do {
                            if let command = try SimulatorCommand.parse(line: line, number: lineNumber) {
                                player.enqueue([(lineNumber, command)])
                            }
                        } catch {
                            badLines = true
                            output.write("simulator: error: " + TerminalText.escape("\(error)"))
                        }
                    }
                    if atEnd {
                        inputDone = true
                        player.enqueue([])
                    }
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                do {
                    stdinSource = try loop.watch(fd: 0, events: .readable) { _ in
                        let count = read(0, &chunk, chunk.count)
                        take(chunk[..<max(count, 0)], atEnd: count <= 0)
                        if count <= 0 { stdinSource?.cancel() }
                    }
                } catch {
                    // A regular file (or /dev/null) cannot be polled: it is all there already.
                    while true {
                        let count = read(0, &chunk, chunk.count)
                        take(chunk[..<max(count, 0)], atEnd: count <= 0)
                        if count <= 0 { break }
                    }
                }
            }
            connection.onDisconnect = {
                warn("the bus went away")
                status = ExitStatus.busUnavailable.code
                loop.stop()
            }
            let signals = try loop.signals([SIGINT, SIGTERM]) { _ in loop.stop() }
            player.enqueue(commands)
            loop.run()
            signals.cancel()
            stdinSource?.cancel()
            connection.close()
            return status
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
}
