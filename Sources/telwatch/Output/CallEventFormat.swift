import CallMonitor

/// How call events look on stdout: one line each, text for people, JSON Lines for programs.
/// The JSON keys and their order are the documented schema (README, "JSON output").
struct CallEventFormat {
    var redactNumbers = false

    /// A caller id is hostile input and private data: `--redact-numbers` keeps only its last two digits.
    func number(_ raw: String) -> String {
        guard redactNumbers, raw.count > 2, raw != "withheld" else { return raw }
        return String(repeating: "*", count: raw.count - 2) + raw.suffix(2)
    }

    /// The hook / JSON event name of a tracker event; nil for the aggregate edges (the run reports those).
    static func eventName(_ event: TrackerEvent) -> String? {
        switch event {
        case .transition(let call, _): return call.state.rawValue
        case .updated: return "updated"
        case .missed: return "missed"
        case .busy, .idle: return nil
        }
    }

    /// `missed`: whether the tracker called this call missed in the same batch (it alone knows,
    /// e.g. after a resume); nil works it out from the snapshot.
    func json(_ event: TrackerEvent, time: Double, liveCalls: Int, missed: Bool? = nil) -> String? {
        jsonObject(event, time: time, liveCalls: liveCalls, missed: missed)?.line
    }

    func jsonObject(_ event: TrackerEvent, time: Double, liveCalls: Int, missed: Bool? = nil) -> JSONObject? {
        guard let name = CallEventFormat.eventName(event) else { return nil }
        let call: CallSnapshot
        var previous: String?
        switch event {
        case .transition(let snapshot, let before): call = snapshot; previous = before?.rawValue
        case .updated(let snapshot), .missed(let snapshot): call = snapshot; previous = snapshot.state.rawValue
        case .busy, .idle: return nil
        }
        var object = JSONObject()
        object.add("event", name)
        object.add("time", time: time)
        object.add("call_id", call.id)
        object.add("backend", call.key.backend.rawValue)
        object.add("modem", call.modem)
        object.add("path", call.key.path)
        object.add("state", call.state.rawValue)
        object.add("previous", previous)
        object.add("detail", call.detail?.rawValue)
        object.add("direction", call.direction.rawValue)
        object.add("number", number(call.number))
        object.add("name", call.name)
        object.add("reason", call.reason)
        object.add("multiparty", call.multiparty)
        object.add("initial", call.initial)
        object.add("resumed", call.resumed)
        object.add("missed", missed ?? CallEventFormat.isMissed(call))
        object.add("first_seen", time: call.firstSeen)
        object.add("connected_at", time: call.connectedAt)
        object.add("ended_at", time: call.endedAt)
        // A call that came and went while the system slept: how long it lasted is unknown.
        object.add("duration", seconds: call.lifeUnseen ? nil : call.endedAt.map { $0 - (call.connectedAt ?? call.firstSeen) })
        object.add("live_calls", liveCalls)
        return object
    }

    /// `14:03:12.345 incoming     3f2a1c9e ringing  in  +15551234 modemmanager Modem/0`
    func text(_ event: TrackerEvent, time: Double, liveCalls: Int) -> String? {
        guard let name = CallEventFormat.eventName(event) else { return nil }
        let call: CallSnapshot
        switch event {
        case .transition(let snapshot, _), .updated(let snapshot), .missed(let snapshot): call = snapshot
        case .busy, .idle: return nil
        }
        var fields = [
            Timestamp.localClock(time),
            pad(name, 12),
            String(call.id.prefix(8)),
            pad(call.detail?.rawValue ?? "ended", 8),
            pad(CallEventFormat.direction(call.direction), 3),
            pad(TerminalText.field(number(call.number)), 16),
            call.key.backend.rawValue + " " + CallEventFormat.shortModem(call.modem),
        ]
        if !call.name.isEmpty { fields.append("name=" + TerminalText.field(call.name)) }
        if let reason = call.reason, call.state == .disconnected || name == "missed" {
            fields.append("reason=" + TerminalText.field(reason))
        }
        if case .transition(_, _) = event, call.state == .disconnected, !call.lifeUnseen, let ended = call.endedAt {
            let lasted = ended - (call.connectedAt ?? call.firstSeen)
            fields.append((call.everConnected ? "talked " : "after ") + Duration.text(lasted))
        }
        if call.multiparty { fields.append("multiparty") }
        if call.initial { fields.append("(live at start)") }
        if call.resumed { fields.append(call.lifeUnseen ? "(while asleep, learned on resume)" : "(learned on resume)") }
        return fields.joined(separator: " ")
    }

    static func isMissed(_ call: CallSnapshot) -> Bool {
        call.state == .disconnected && call.direction == .incoming && !call.everConnected
    }

    static func direction(_ direction: CallDirection) -> String {
        switch direction {
        case .incoming: return "in"
        case .outgoing: return "out"
        case .unknown: return "?"
        }
    }

    /// `/org/freedesktop/ModemManager1/Modem/0` → `Modem/0`; oFono's `/phonesim` → `phonesim`.
    static func shortModem(_ path: String) -> String {
        if path.isEmpty { return "-" }
        let prefix = "/org/freedesktop/ModemManager1/"
        if path.hasPrefix(prefix) { return String(path.dropFirst(prefix.count)) }
        return path.hasPrefix("/") ? String(path.dropFirst()) : path
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

enum Duration {
    /// `7.7 s`, `2 min 05 s`, `1 h 02 min`.
    static func text(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        if seconds < 60 {
            let tenths = Int((seconds * 10).rounded())
            return "\(tenths / 10).\(tenths % 10) s"
        }
        let whole = Int(seconds.rounded())
        if whole < 3600 {
            let s = whole % 60
            return "\(whole / 60) min \(s < 10 ? "0" : "")\(s) s"
        }
        let minutes = (whole / 60) % 60
        return "\(whole / 3600) h \(minutes < 10 ? "0" : "")\(minutes) min"
    }
}
