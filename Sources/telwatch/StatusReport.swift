import BGRunManager
import CallMonitor
import DBus
import Loop
import MonitorAPI
import Pipeline

/// What `status` shows: the running service's view when one runs (its ids, its durations), else
/// a look at the stacks and at the run record the last telwatch left.
struct StatusReport {
    /// The service that answered; nil when none runs.
    var service: ServiceView?
    var backends: [(name: String, state: String)]
    var calls: [CallSnapshot]
    var run: RunRecord?
    var sleep: SleepRecord?

    init(service: ServiceView) {
        self.service = service
        backends = service.backends
        calls = service.calls
        run = service.run
        sleep = service.sleep
    }

    /// What the state directory says of the run when no service answered (`RecordedRun`).
    var recorded: RecordedRun?

    init(backends: [(name: String, state: String)], calls: [CallSnapshot], recorded: RecordedRun, sleep: SleepRecord?) {
        self.backends = backends
        self.calls = calls
        self.recorded = recorded
        if case .held(let record) = recorded { run = record }
        self.sleep = sleep
    }

    /// No service runs: the stacks read once here, and the records in the state directory.
    static func ownLook(_ options: WatchOptions, bus: BusSession) -> StatusReport? {
        let (loop, connection) = (bus.loop, bus.connection)
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
        // No service answered: the rest of the rule (StatePlace) decides whose records are read.
        let place = StatePlace.find(options, bus: nil)
        place?.say("status")
        let directory = place?.directory
        // The calls the last telwatch knew keep their ids and times here too.
        monitor.remembered = directory.flatMap { RecordFile.text($0 + "/" + RunStateStore.liveCallsName) }
            .map { LiveCallsRecord.decode($0, since: bootWallClock()) } ?? []
        do { try monitor.start() } catch {
            warn("\(error)")
            return nil
        }
        if !loop.run(until: { pending.isEmpty }, timeout: 10) {
            for kind in pending { states[kind] = "no answer within 10 s" }
        }
        let calls = monitor.liveCalls
        monitor.stop()
        return StatusReport(backends: selection.kinds.map { ($0.rawValue, states[$0] ?? "unknown") }, calls: calls,
                            recorded: directory.map(RecordedRun.init(directory:)) ?? .none,
                            sleep: directory.flatMap { RunStateStore.readSleep(directory: $0) })
    }

    func write(to output: LineWriter, json: Bool, bus: BusAddress) {
        let now = wallClockNow()
        let schema = EventSchema()
        if json {
            var text = "{\"service\":"
            if let service {
                var object = JSONObject()
                object.add("owner", service.owner)
                if let pid = service.pid { object.add("pid", Int(pid)) } else { object.add("pid", nil as String?) }
                object.add("version", service.version)
                text += object.line
            } else {
                text += "null"
            }
            text += ",\"backends\":{"
            text += backends.map { JSONObject.quote($0.name) + ":" + JSONObject.quote($0.state) }.joined(separator: ",")
            text += "},\"calls\":["
            text += calls.map { call in
                var object = JSONObject()
                _ = schema.write(.transition(call, previous: nil), time: now, liveCalls: calls.count, into: &object)
                return object.line
            }.joined(separator: ",")
            text += "],\"run\":"
            if let run {
                var object = JSONObject()
                object.add("run_id", run.runID)
                object.add("reason", run.reason)
                object.add("pid", Int(run.pid))
                object.add("started_at", time: run.startedAt)
                object.add("held_for", seconds: run.heldFor(at: now))
                object.add("holders", run.holders)
                object.add("lock", run.lock.rawValue)
                object.add("lease_left", seconds: run.leaseLeft(at: now))
                text += object.line
            } else {
                text += "null"
            }
            text += recorded?.jsonFields() ?? ""
            text += ",\"sleep\":" + (sleep.map(SleepStatus.json) ?? "null")
            output.write(text + "}")
            return
        }
        if let service {
            output.write("service: telwatch \(TerminalText.field(service.version))" + (service.pid.map { ", pid \($0)" } ?? "")
                         + " (\(TerminalText.field(service.owner)) on the \(bus) bus)")
        } else {
            output.write("service: no telwatch runs on the \(bus) bus (nobody owns \(MonitorNames.busName)); "
                         + "below, the stacks as read now and the records telwatch left")
        }
        for backend in backends { output.write("\(backend.name): \(TerminalText.escape(backend.state))") }
        if calls.isEmpty { output.write("no live calls") }
        for call in calls {
            let since = call.connectedAt ?? call.firstSeen
            output.write("  \(TerminalText.field(String(call.id.prefix(8))))  \(call.state.rawValue) (\(call.detail?.rawValue ?? "-"))  "
                         + "\(CallEventFormat.direction(call.direction))  \(TerminalText.field(call.number))  "
                         + "\(call.key.backend.rawValue) \(TerminalText.field(CallEventFormat.shortModem(call.modem)))  "
                         + "for \(Duration.text(now - since))")
        }
        if let run {
            var line = "run: held for \(Duration.text(run.heldFor(at: now))) (since \(Timestamp.localClock(run.startedAt))) "
                + "by telwatch pid \(run.pid), \(run.holders) call\(run.holders == 1 ? "" : "s"); lock \(run.lock)"
            if let left = run.leaseLeft(at: now) { line += "; lease \(Duration.text(left)) left" }
            output.write(line)
        } else {
            output.write(recorded?.line() ?? "run: none")
        }
        for line in sleep.map(SleepStatus.lines) ?? ["sleep: none seen"] { output.write(line) }
    }
}
