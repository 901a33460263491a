import DBus
import Glibc
import Loop
import Simulator

/// `telwatch demo`: the whole pipeline against the built-in simulator on a private bus, so a
/// newcomer sees exactly what a phone would print, with no modem and no system bus.
enum DemoCommand {
    /// The watch options `demo` takes, besides its own `--speed`.
    static let acceptedOptions = OptionTable.accepted(by: .demo)

    static func run(_ arguments: [String]) -> Int32 {
        var speed = 1.0
        var options: WatchOptions
        switch WatchArguments.parseOrExit(
            arguments, command: "demo", accepting: acceptedOptions, help: Help.demo,
            own: { argument, cursor in
                guard argument == "--speed" else { return false }
                let text = try cursor.value(for: argument)
                guard let value = Double(text), value >= 0.1, value <= 1000 else {
                    throw UsageError("--speed takes a factor from 0.1 to 1000, not '\(text)'")
                }
                speed = value
                return true
            }) {
        case .success(let parsed): options = parsed
        case .failure(let exit): return exit.status
        }

        let output = LineWriter(fd: 1)
        let narrate: (String) -> Void = { text in
            if options.json { warn("demo: " + text) } else { output.write("── " + TerminalText.escape(text)) }
        }
        do {
            let bus = try PrivateBus()
            defer { bus.stop() }
            options.bus = .address(bus.address)
            options.backend = .modemManager
            options.stateDirectory = bus.directory + "/state"
            let loop = try EventLoop()
            // The phone's side: a simulated ModemManager and logind on their own connection.
            let phone = try Connection(.address(bus.address), loop: loop)
            defer { phone.close() }
            let logind = try SimulatedLogind(connection: phone)
            // The phone session's services, on the same private bus, which plays the session bus too.
            options.actions.bus = .address(bus.address)
            let phoneSession = options.actions.isAnyOn
                ? try SimulatedPhoneSession(connection: phone, say: { said in
                    // What the stand-ins were asked carries the caller's number and name.
                    let line = Timestamp.localClock(wallClockNow()) + " ▸ " + TerminalText.escape(said)
                    if options.json { warn("demo: " + line) } else { output.write(line) }
                }) : nil
            let simulator = try SimulatedModemManager(connection: phone)
            try simulator.addModem(model: "Demo Modem", announce: false)
            try simulator.claimName()

            // telwatch's side: the real watch pipeline on a connection of its own.
            let connection = try Connection(.address(bus.address), loop: loop)
            defer { connection.close() }
            let session = try WatchSession(options: options, loop: loop, connection: connection, output: output)
            let player = ScriptPlayer(simulator: simulator, loop: loop) { line in
                if options.verbosity == .verbose { warn("simulator: " + line) }
            }
            player.timeScale = 1 / speed
            player.onNarration = narrate
            var finishing: TimerSource?
            defer {
                // The closures set here hold the player, the session and the timer that hold them:
                // cut those cycles, so the demo frees what it made (LeakSanitizer checks at exit).
                finishing?.cancel()
                finishing = nil
                player.onIdle = nil
                player.onNarration = nil
                session.onReady = nil
                session.onFinished = nil
            }
            player.onIdle = {
                // The story is told: stop once telwatch has seen the last call end (at most 3 s on).
                guard finishing == nil else { return }
                let idleAt = monotonicNow()
                let status = player.failure == nil ? ExitStatus.success.code : ExitStatus.failure.code
                do {
                    finishing = try loop.timer {
                        guard (session.liveCalls.isEmpty && !session.isRunHeld) || monotonicNow() - idleAt > 3 else {
                            return
                        }
                        finishing?.cancel()
                        session.stop(status: status)
                    }
                    finishing?.schedule(after: 0.1, repeating: 0.1)
                } catch {
                    warn("demo: no timer to wait for the last call with (\(error)); stopping now")
                    session.stop(status: status)
                }
            }
            session.onReady = {
                narrate("telwatch is following a simulated ModemManager on a private bus")
                do {
                    player.enqueue(try SimulatorCommand.parse(DemoStory.calls + (options.actions.notify ? "\n" + DemoStory.callBack : "")))
                } catch {
                    warn("demo: the built-in story does not parse: \(error)")
                    session.stop(status: ExitStatus.failure.code)
                }
            }
            session.onFinished = { loop.stop() }
            try session.start()
            withExtendedLifetime((logind, phoneSession)) { loop.run() }
            narrate("done: every call ended, the inhibitor lock is released")
            output.flush()
            return session.exitStatus
        } catch {
            warn("demo: \(error)")
            return ExitStatus.failure.code
        }
    }
}
