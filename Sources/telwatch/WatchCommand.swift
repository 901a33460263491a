import DBus

/// `telwatch watch`: the daemon. Runs until SIGINT/SIGTERM (exit 0) or a lost bus (exit 3).
enum WatchCommand {
    static func run(_ options: WatchOptions) -> Int32 {
        let bus: BusSession
        do { bus = try BusSession(options.bus) } catch {
            warn("\(error)")
            return ExitStatus.busUnavailable
        }
        let (loop, connection) = (bus.loop, bus.connection)
        defer { connection.close() }
        do {
            let session = try WatchSession(options: options, loop: loop, connection: connection, output: LineWriter(fd: 1))
            session.onFinished = { loop.stop() }
            if options.verbosity == .verbose {
                session.onReady = { warn("ready: following \(options.backend.rawValue) on the \(options.bus.label) bus") }
            }
            try session.start()
            loop.run()
            return session.exitStatus
        } catch {
            warn("\(error)")
            return ExitStatus.failure
        }
    }
}

/// `telwatch doctor` arguments.
enum DoctorCommand {
    static func run(_ arguments: [String]) -> Int32 {
        var options = WatchOptions()
        var cursor = ArgumentCursor(arguments)
        do {
            while let argument = cursor.next() {
                switch argument {
                case "--help", "-h": LineWriter(fd: 1).write(Help.doctor); return ExitStatus.success
                case "--bus", "--backend", "--inhibit", "--hooks", "--state-dir":
                    try options.set(String(argument.dropFirst(2)), try cursor.value(for: argument))
                case "--sleep-delay-lock": try cursor.noValue(for: argument); options.sleepDelayLock = true
                case "--config": try options.load(configFile: try cursor.value(for: argument))
                default: throw UsageError("doctor: unknown option '\(argument)' (see telwatch doctor --help)")
                }
            }
        } catch {
            warn("\(error)")
            return ExitStatus.usage
        }
        var doctor = Doctor(options: options)
        return doctor.run()
    }
}
