import BGRunManager
import CallMonitor
import DBus
import Loop
import Pipeline

/// `telwatch status`: a one-shot look at the calls live now and the run the daemon recorded.
enum StatusCommand {
    /// The watch options `status` takes.
    static let acceptedOptions: Set<String> = ["--json", "--bus", "--backend", "--state-dir"]

    static func run(_ arguments: [String]) -> Int32 {
        let options: WatchOptions
        switch WatchArguments.parseOrExit(arguments, command: "status", accepting: acceptedOptions, help: Help.status) {
        case .success(let parsed): options = parsed
        case .failure(let exit): return exit.status
        }
        let output = LineWriter(fd: 1)
        guard let bus = BusSession.open(options.bus) else { return ExitStatus.busUnavailable }
        let (loop, connection) = (bus.loop, bus.connection)
        defer { connection.close() }
        let selection = options.backend
        var pending = Set(selection.kinds)
        var states: [BackendKind: String] = [:]
        let monitor = CallMonitor(connection: connection, backends: selection, onEvents: { _ in }, onNotice: { notice in
            switch notice {
            case .synced(let kind, let modems, _):
                states[kind] = "\(modems) voice modem\(modems == 1 ? "" : "s")"
                pending.remove(kind)
            case .serviceAbsent(let kind): states[kind] = "not running"; pending.remove(kind)
            case .syncRefused(let kind, let why): states[kind] = "listing refused: \(why)"; pending.remove(kind)
            case .syncFailed(let kind, let why): states[kind] = "listing failed: \(why)"; pending.remove(kind)
            default: break
            }
        })
        do { try monitor.start() } catch {
            warn("\(error)")
            return ExitStatus.busUnavailable
        }
        if !loop.run(until: { pending.isEmpty }, timeout: 10) {
            for kind in pending { states[kind] = "no answer within 10 s" }
        }
        let calls = monitor.liveCalls
        monitor.stop()
        let directory = options.stateDirectory ?? RunStateStore.defaultDirectory()
        let record = directory.flatMap { RunStateStore.read(directory: $0) }
        let sleep = directory.flatMap { RunStateStore.readSleep(directory: $0) }
        let now = wallClockNow()
        let schema = EventSchema()

        if options.json {
            var text = "{\"backends\":{"
            text += selection.kinds.map { JSONObject.quote($0.rawValue) + ":" + JSONObject.quote(states[$0] ?? "unknown") }
                .joined(separator: ",")
            text += "},\"calls\":["
            text += calls.map { call in
                var object = JSONObject()
                _ = schema.write(.transition(call, previous: nil), time: now, liveCalls: calls.count, into: &object)
                return object.line
            }.joined(separator: ",")
            text += "],\"run\":"
            if let record {
                var run = JSONObject()
                run.add("run_id", record.runID)
                run.add("reason", record.reason)
                run.add("pid", Int(record.pid))
                run.add("started_at", time: record.startedAt)
                run.add("held_for", seconds: record.heldFor(at: now))
                run.add("holders", record.holders)
                run.add("lock", record.lock.rawValue)
                run.add("lease_left", seconds: record.leaseLeft(at: now))
                text += run.line
            } else {
                text += "null"
            }
            text += ",\"sleep\":" + (sleep.map(SleepStatus.json) ?? "null")
            output.write(text + "}")
        } else {
            for kind in selection.kinds { output.write("\(kind.rawValue): \(states[kind] ?? "unknown")") }
            if calls.isEmpty { output.write("no live calls") }
            for call in calls {
                let since = call.connectedAt ?? call.firstSeen
                output.write("  \(call.id.prefix(8))  \(call.state.rawValue) (\(call.detail?.rawValue ?? "-"))  "
                             + "\(CallEventFormat.direction(call.direction))  \(TerminalText.field(call.number))  "
                             + "\(call.key.backend.rawValue) \(CallEventFormat.shortModem(call.modem))  "
                             + "for \(Duration.text(now - since))")
            }
            if let record {
                var line = "run: held for \(Duration.text(record.heldFor(at: now))) (since \(Timestamp.localClock(record.startedAt))) "
                    + "by telwatch pid \(record.pid), \(record.holders) call\(record.holders == 1 ? "" : "s"); lock \(record.lock)"
                if let left = record.leaseLeft(at: now) { line += "; lease \(Duration.text(left)) left" }
                output.write(line)
            } else {
                output.write("run: none")
            }
            for line in sleep.map(SleepStatus.lines) ?? ["sleep: none seen"] { output.write(line) }
        }
        return ExitStatus.success
    }
}

/// The last sleep and resume, as `status` and `doctor` show them.
enum SleepStatus {
    static func json(_ record: SleepRecord) -> String {
        var object = JSONObject()
        EventSchema().write(record, into: &object)
        return object.line
    }

    static func lines(_ record: SleepRecord) -> [String] {
        var line = "sleep: last " + (record.sleptAt.map(Timestamp.readable) ?? "never")
        if record.isAsleep {
            line += ", not resumed since"
        } else if let resumedAt = record.resumedAt {
            line += ", resumed " + Timestamp.readable(resumedAt)
        }
        line += record.lastSleepOverridden ? "; a call was live (the lock was overridden)" : "; no call was live"
        var lines = [line]
        if record.overrides > 0, let at = record.lastOverrideAt {
            lines.append("sleep: \(record.overrides) sleep\(record.overrides == 1 ? "" : "s") with a call live, the last "
                         + "\(Timestamp.readable(at)) (run \(record.lastOverrideRun?.prefix(8) ?? "?"), lock "
                         + "\(record.lastOverrideLock?.rawValue ?? "?"))")
        }
        return lines
    }
}
