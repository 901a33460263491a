import DBus

/// `telwatch watch`: the daemon. Runs until SIGINT/SIGTERM (exit 0) or a lost bus (exit 3).
enum WatchCommand {
    /// `reload` parses the options again, for SIGHUP (nil: `--help`, which cannot happen twice).
    static func run(_ options: WatchOptions, reload: @escaping () throws -> WatchOptions? = { nil }) -> Int32 {
        guard let bus = BusSession.open(options.bus) else {
            warn(noStackHint)
            return ExitStatus.busUnavailable.code
        }
        let (loop, connection) = (bus.loop, bus.connection)
        defer { connection.close() }
        do {
            let session = try WatchSession(options: options, loop: loop, connection: connection, output: LineWriter(fd: 1))
            session.onFinished = { loop.stop() }
            session.reloadOptions = reload
            session.onReady = { [unowned session] in
                if options.verbosity == .verbose {
                    warn("ready: following \(options.backend.rawValue) on the \(options.bus) bus", priority: .notice)
                }
                if options.verbosity != .quiet, session.absentStacks.count == options.backend.kinds.count {
                    warn("no telephony stack runs on the \(options.bus) bus yet (telwatch waits for it); " + noStackHint,
                         priority: .notice)
                }
            }
            try session.start()
            loop.run()
            return session.exitStatus
        } catch let taken as APIService.NameTaken {
            warn("\(taken)")
            return ExitStatus.apiNameTaken.code
        } catch {
            warn("\(error)", priority: .error)
            return ExitStatus.failure.code
        }
    }

    /// What to try on a machine with no modem stack: said with the error, in one line.
    static let noStackHint = "to see telwatch work without a modem: telwatch demo; to follow another bus: "
        + "--bus session or --bus ADDRESS"
}
