import DBus
import Glibc
import Loop
import MonitorAPI
import Pipeline

/// `telwatch events`: follows the running service's `Event` signal and prints it as `watch`
/// does (text, or `--json` byte for byte the service's own line): a second terminal sees what the
/// service sees, with no second monitor, lock or hook run. When the service goes, one line on
/// stderr and exit status 3: a new service is a new stream (what happened in between is not
/// replayed), so a script is told rather than left waiting on a silent pipe.
enum EventsCommand {
    static let acceptedOptions = OptionTable.accepted(by: .events)

    static func run(_ arguments: [String]) -> Int32 {
        let options: WatchOptions
        switch WatchArguments.parseOrExit(arguments, command: "events", accepting: acceptedOptions, help: Help.events) {
        case .success(let parsed): options = parsed
        case .failure(let exit): return exit.status
        }
        let bus = options.apiBus ?? options.bus
        guard let session = BusSession.open(bus) else { return ExitStatus.busUnavailable.code }
        let (loop, connection) = (session.loop, session.connection)
        defer { connection.close() }
        let output = LineWriter(fd: 1)
        // The text of `watch`, through its own sink; the JSON line rebuilt key by key.
        let text = OutputSink(output: output, json: false, verbosity: .normal, schema: EventSchema())
        var status = ExitStatus.success.code
        func stop(_ code: Int32, _ message: String?) {
            if let message { warn(message) }
            status = code
            loop.stop()
        }
        do {
            let owner = try connection.watchName(MonitorNames.busName) { event in
                switch event {
                case .appeared(let unique):
                    subscribe(connection) { result in
                        switch result {
                        case .success:
                            if options.verbosity == .verbose { warn("following the telwatch service \(unique) on the \(bus) bus") }
                        case .failure(let error) where Access.isRefusal(error):
                            // The bus policy's refusal, in one line: who may ask, and how to become one.
                            stop(ExitStatus.failure.code, Access.refusal("events", bus: bus))
                        case .failure(let error):
                            stop(ExitStatus.failure.code, "the telwatch service refused Subscribe: \(error)")
                        }
                    }
                case .absent:
                    stop(ExitStatus.busUnavailable.code, "no telwatch service is running on the \(bus) bus "
                         + "(nobody owns \(MonitorNames.busName))")
                case .vanished:
                    stop(ExitStatus.busUnavailable.code, "the telwatch service stopped")
                }
            }
            let rule = MatchRule(sender: MonitorNames.busName, path: MonitorNames.path.rawValue,
                                 interface: MonitorNames.interface, member: MonitorNames.eventSignal)
            connection.subscribe(rule, owner: owner) { message in
                guard let event = RemoteEvent(message) else {
                    return warn("skipped an Event signal with signature '\(message.signature)'")
                }
                if options.json {
                    output.write(line: event.jsonLine)
                } else if let pipelineEvent = event.pipelineEvent {
                    text.receive(pipelineEvent, liveCalls: event.liveCalls)
                }
                if output.isBroken { stop(ExitStatus.success.code, nil) }
            }
            connection.onDisconnect = { stop(ExitStatus.busUnavailable.code, "lost the \(bus) bus") }
            loop.run()
            owner.cancel()
        } catch {
            warn("\(error)")
            return ExitStatus.busUnavailable.code
        }
        return status
    }

    private static func subscribe(_ connection: Connection, _ done: @escaping (Result<Message, DBusError>) -> Void) {
        do {
            let call = try Message.methodCall(destination: MonitorNames.busName, path: MonitorNames.path,
                                              interface: MonitorNames.interface, member: "Subscribe")
            connection.call(call, timeout: 10, reply: done)
        } catch {
            // Unsent, no answer would ever come: `events` would wait for nothing.
            done(.failure(error as? DBusError ?? .invalidArgument("\(error)")))
        }
    }
}

extension Help {
    static let events = """
    \(OptionHelp.usage(for: .events))

    Follows the running telwatch service (its D-Bus API, io.telwatch.Monitor1) and prints its
    events as it does: text for people, or with --json exactly the service's own JSON lines. No
    second monitor, lock or hook run. The text shows calls, runs, sleeps and the stacks; --json
    has every event. --verbose says on stderr once it follows the service. Needs a bus policy that lets you talk to the service (docs/dbus-api.md).
    exit status: 0 stdout closed; 1 the service refused; 3 no service, or it stopped (a new one
    is a new stream: run events again). A telwatch of the user unit has its API on the session
    bus: telwatch events --api-bus session.

    examples:
      telwatch events
      telwatch events --json | jq -c 'select(.event=="incoming") | .number'
    """
}
