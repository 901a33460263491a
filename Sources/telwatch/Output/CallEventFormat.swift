import CallMonitor
import Pipeline

/// How a call event looks as a line of text, for people (programs read the JSON: `EventSchema`).
struct CallEventFormat {
    var schema = EventSchema()

    /// `14:03:12.345 incoming     3f2a1c9e ringing  in  +15551234 modemmanager Modem/0`
    /// `contact`: the number's contact (`--contacts`), as the delivery looked it up.
    func text(_ event: TrackerEvent, time: Double, contact: String?) -> String? {
        guard let name = EventSchema.name(of: event), let call = event.call else { return nil }
        var fields = [
            Timestamp.localClock(time),
            name.rawValue.padded(to: 12),
            TerminalText.field(String(call.id.prefix(8))),
            (call.detail?.rawValue ?? "ended").padded(to: 8),
            CallEventFormat.direction(call.direction).padded(to: 3),
            TerminalText.field(schema.number(call.number)).padded(to: 16),
            // The id and the modem are telwatch's and the stack's own, but `events` reads them
            // from the bus as text: escaped like the rest.
            call.key.backend.rawValue + " " + TerminalText.field(CallEventFormat.shortModem(call.modem.eventValue)),
        ]
        if let contact { fields.append("contact=" + TerminalText.field(contact)) }
        if !call.name.isEmpty { fields.append("name=" + TerminalText.field(call.name)) }
        if let reason = call.reason?.word, call.state == .disconnected || name == .missed {
            fields.append("reason=" + TerminalText.field(reason))
        }
        if case .transition = event, call.state == .disconnected, let lasted = call.duration {
            fields.append((call.everConnected ? "talked " : "after ") + Duration.text(lasted))
        }
        if call.multiparty { fields.append("multiparty") }
        if call.initial { fields.append("(live at start)") }
        if call.resumed { fields.append(call.lifeUnseen ? "(while asleep, learned on resume)" : "(learned on resume)") }
        return fields.joined(separator: " ")
    }

    /// `14:03:12.345 screened     3f2a1c9e reject   in  +19005550100     rule=block (FILE:3) hangup=requested`
    func text(_ screened: ScreenedCall, time: Double) -> String {
        var fields = [
            Timestamp.localClock(time),
            "screened".padded(to: 12),
            TerminalText.field(String(screened.call.id.prefix(8))),
            screened.action.rawValue.padded(to: 8),
            CallEventFormat.direction(screened.call.direction).padded(to: 3),
            TerminalText.field(schema.number(screened.call.number)).padded(to: 16),
            "rule=" + TerminalText.field(screened.decision.ruleText),
        ]
        if let target = screened.decision.deflectTo { fields.append("to=" + TerminalText.field(schema.number(target))) }
        if let command = screened.decision.command { fields.append("command=" + TerminalText.field(command.name)) }
        if let deflection = screened.deflection { fields.append("deflect=" + deflection.word) }
        if let hangup = screened.hangup { fields.append("hangup=" + hangup.word) }
        if let why = screened.failure { fields.append("(" + TerminalText.field(why) + ")") }
        return fields.joined(separator: " ")
    }

    /// `14:03:12.345 acted        3f2a1c9e deflect  to=+15550100 by=api uid=1000 stack-refused (…) 0.120s`:
    /// the number and the stack's message are anyone's text, escaped like a caller id.
    func text(_ acted: ActedCall, time: Double) -> String {
        var fields = [
            Timestamp.localClock(time),
            EventSchema.actedEvent.padded(to: 12),
            TerminalText.field(acted.callID.map { String($0.prefix(8)) } ?? "-").padded(to: 8),
            acted.kind.rawValue.padded(to: 8),
        ]
        if let number = acted.number { fields.append("to=" + TerminalText.field(schema.number(number))) }
        if let modem = acted.modem { fields.append("modem=" + TerminalText.field(CallEventFormat.shortModem(modem))) }
        fields.append("by=" + acted.requester.rawValue)
        if let uid = acted.uid { fields.append("uid=\(uid)") }
        fields.append(acted.result)
        if let failure = acted.report.failure {
            let error = failure.stackError.map { TerminalText.field($0) + ": " } ?? ""
            fields.append("(" + error + TerminalText.escape(failure.message) + ")")
        }
        if acted.kind == .tones { fields.append("tones=\(acted.report.tonesSent)") }
        // An act takes milliseconds (the modem's answer), and that is what is worth seeing.
        let elapsed = acted.report.elapsed
        if elapsed > 0 { fields.append(elapsed < 10 ? "\(Int((elapsed * 1000).rounded())) ms" : Duration.text(elapsed)) }
        return fields.joined(separator: " ")
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
}

extension String {
    /// Left-aligned in a column of `width` characters (never cut).
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
