import BGRunManager
import CallMonitor
import DBus
import Pipeline

/// One `Event(s, a{sv})` of the running service, as it came: its name and its fields in order,
/// typed by the API's one rule (docs/dbus-api.md): `s` text, `b` flag, `x` count, `d` seconds,
/// `t` a moment in microseconds, an empty array for null.
struct RemoteEvent {
    let name: String
    let fields: APIFields

    init?(_ message: Message) {
        guard message.hasSignature("sa{sv}"), let values = try? message.values(), values.count == 2,
              let name = values[0].string else { return nil }
        self.name = name
        fields = APIFields(values[1])
    }

    /// The JSON line, written as the service's own `--json` writes it (`JSONObject`), key by key.
    var jsonLine: [UInt8] {
        var object = JSONObject()
        for (key, value) in fields.entries {
            object.key(key)
            switch value {
            case .string(let text): object.value(text)
            case .bool(let flag): object.value(flag)
            case .int64(let count): object.value(Int(count))
            case .double(let seconds): object.value(seconds: seconds)
            case .uint64(let microseconds): object.value(microseconds: microseconds)
            default: object.null()  // an empty array: null
            }
        }
        return object.lineBytes
    }

    private func text(_ key: String) -> String? { fields.text(key) }
    private func flag(_ key: String) -> Bool { fields.flag(key) }
    private func count(_ key: String) -> Int { fields.count(key) }
    private func seconds(_ key: String) -> Double? { fields.seconds(key) }
    private func time(_ key: String) -> Double? { fields.time(key) }

    var liveCalls: Int { count("live_calls") }

    /// The pipeline event this was, for the text format of `watch` (`OutputSink`): the events
    /// that text shows (calls, runs, sleeps, stacks); nil for the rest, which only `--json` shows.
    var pipelineEvent: PipelineEvent? {
        let time = self.time("time") ?? 0
        switch name {
        case "incoming", "dialing", "connected", "disconnected", "updated", "missed":
            guard let call = call else { return nil }
            let event: TrackerEvent
            switch name {
            case "updated": event = .updated(call)
            case "missed": event = .missed(call)
            default: event = .transition(call, previous: text("previous").flatMap(CallState.init(rawValue:)))
            }
            return .calls([event], time: time)
        case CallHookEvent.screened.rawValue: return screened.map { .screened($0, time: time) }
        case "backend": return backendNotice.map { .backend($0, time: time) }
        case "ready": return .ready(time: time)
        case "stats", "exit":
            return .stats(ServiceStats(occasion: name == "exit" ? .exit : .stats, time: time,
                                       signals: UInt64(max(0, count("signals"))), uptime: seconds("uptime") ?? 0))
        default:
            if let kind = runKind { return .run(RunEvent(time: time, kind: kind)) }
            if let kind = sleepKind { return .sleep(SleepEvent(time: time, kind: kind)) }
            return nil
        }
    }

    private var call: CallSnapshot? {
        guard let id = text("call_id"), let backend = text("backend").flatMap(BackendKind.init(rawValue:)),
              let state = text("state").flatMap(CallState.init(rawValue:)), let firstSeen = time("first_seen")
        else { return nil }
        return CallSnapshot(
            id: id, key: CallKey(backend: backend, path: text("path") ?? ""), modem: ModemPath(text("modem") ?? ""),
            modemIdentity: ModemIdentity(equipmentID: text("modem_id") ?? "", ownNumber: text("modem_number") ?? "",
                                         operatorName: text("operator") ?? ""),
            direction: text("direction").flatMap(CallDirection.init(rawValue:)) ?? .unknown,
            number: text("number") ?? "", name: text("name") ?? "", state: state,
            detail: text("detail").flatMap(CallDetail.init(rawValue:)), reason: text("reason").map(CallEndReason.init(word:)),
            multiparty: flag("multiparty"), initial: flag("initial"), resumed: flag("resumed"),
            firstSeen: firstSeen, connectedAt: time("connected_at"), endedAt: time("ended_at"), missed: flag("missed"))
    }

    /// A screening decision: always about an incoming call (no rule touches another).
    private var screened: ScreenedCall? {
        guard let id = text("call_id"), let backend = text("backend").flatMap(BackendKind.init(rawValue:)),
              let decided = text("decision").flatMap(ScreeningAction.init(rawValue:)),
              let rule = text("rule").flatMap(ScreeningRuleKind.init(rawValue:)) else { return nil }
        let call = CallSnapshot(
            id: id, key: CallKey(backend: backend, path: ""), modem: "", modemIdentity: ModemIdentity(),
            direction: .incoming, number: text("number") ?? "", name: "", state: .incoming, detail: nil, reason: nil,
            multiparty: false, initial: false, resumed: false, firstSeen: time("time") ?? 0, connectedAt: nil,
            endedAt: nil, missed: false)
        func outcome(_ key: String, failed: Bool) -> HangupOutcome? {
            switch text(key) {
            case "requested": .requested
            case "failed": .failed(failed ? text("message") ?? "" : "")
            default: nil
            }
        }
        let hangup = outcome("hangup", failed: true)
        let deflection = outcome("deflect", failed: hangup?.failure == nil)
        let command = text("command").map { ScreeningCommand(name: $0, arguments: []) }
        return ScreenedCall(call: call, decision: ScreeningDecision(action: decided, rule: rule, source: text("source"),
                                                                    deflectTo: text("deflect_to"), command: command),
                            hangup: hangup, deflection: deflection)
    }

    private var backendNotice: BackendNotice? {
        guard let kind = text("backend").flatMap(BackendKind.init(rawValue:)) else { return nil }
        switch text("status").flatMap(BackendStatus.init(rawValue:)) {
        case .appeared: return .serviceAppeared(kind, owner: text("owner") ?? "")
        // The event says how many calls were live in all; the calls' own events say which ended.
        case .vanished: return .serviceVanished(kind, liveCalls: count("live_calls"))
        case .absent: return .serviceAbsent(kind)
        case .synced: return .synced(kind, modems: count("modems"), calls: count("calls"))
        case .syncRefused: return .syncRefused(kind, text("message") ?? "")
        case .syncFailed: return .syncFailed(kind, text("message") ?? "")
        case nil: return nil
        }
    }

    private var runInfo: RunInfo {
        RunInfo(id: text("run_id") ?? "", reason: text("reason") ?? "", firstHolder: text("holder") ?? "",
                startedAt: time("time") ?? 0)
    }

    private var runKind: RunEvent.Kind? {
        switch name {
        case "run-started": return .started(runInfo)
        case "run-stopped":
            guard let reason = text("reason").flatMap(RunEndReason.init(rawValue:)) else { return nil }
            return .stopped(runInfo, reason: reason, duration: seconds("duration") ?? 0)
        case "run-expired": return .expired(runInfo, duration: seconds("duration") ?? 0)
        case "lock-taken": return .lockTaken(InhibitorRequest(what: text("what") ?? "", mode: text("mode") ?? ""))
        case "lock-retaken": return .lockRetaken(InhibitorRequest(what: text("what") ?? "", mode: text("mode") ?? ""))
        case "heartbeat":
            return .heartbeat(runID: text("run_id") ?? "", count: count("count"), elapsed: seconds("elapsed") ?? 0)
        default: return nil
        }
    }

    private var sleepKind: SleepEvent.Kind? {
        switch name {
        case "sleep": return .sleep(runID: text("run_id"), holders: count("holders"))
        case "resume": return .resume(asleepFor: seconds("asleep_for"))
        case "sleep-overridden":
            return .overridden(runID: text("run_id") ?? "", lock: text("lock").flatMap(LockState.init(rawValue:)) ?? .off,
                               inhibit: text("inhibit") ?? "", holders: count("holders"))
        default: return nil
        }
    }
}
