import CallMonitor
import Pipeline

/// Does what the messages on `TOPIC/command` ask (`--mqtt-commands`, docs/mqtt.md "Commands"),
/// through the session as the D-Bus API does, and says every refusal in one stderr line,
/// `mqtt: a command on TOPIC/command was refused: …`, each kind once until a command works.
/// The acts' outcomes reach the event stream (and `TOPIC/events`) as the session's `acted` events.
final class MQTTCommandTaker {
    private weak var session: SinkSession?
    private let topic: String
    private let report: (String) -> Void
    /// Kinds of refusal said since the last command that worked.
    private var said: Set<String> = []

    init(session: SinkSession?, topic: String, report: @escaping (String) -> Void) {
        self.session = session
        self.topic = topic
        self.report = report
    }

    /// One message; `ringing` are the calls ringing now, as `TOPIC/ringing-call` counts them.
    func take(_ message: MQTTMessage, ringing: [CallSnapshot]) {
        let command: MQTTCommand
        switch MQTTCommand.parse(message) {
        case .failure(let refusal): return refused(refusal.description, kind: refusal.kind)
        case .success(let parsed): command = parsed
        }
        let verb = command.verb.rawValue
        let id: String
        switch command.call {
        case .id(let given):
            id = given
        case .ringing:
            guard ringing.count == 1, let call = ringing.first else {
                return ringing.isEmpty
                    ? refused("\(verb) \(MQTTCallChoice.ringingWord): no call rings", kind: "none ringing")
                    : refused("\(verb) \(MQTTCallChoice.ringingWord): \(ringing.count) calls ring; name one by its call_id",
                              kind: "several ringing")
            }
            id = call.id
        }
        guard let session else { return refused("\(verb): no live call has the id \(id)", kind: "no such call") }
        switch command.action {
        case .silence:
            switch session.silence(callID: id) {
            case .silenced, .quietAlready:
                said.removeAll()
            case .noSuchCall:
                refused("\(verb): no live call has the id \(id)", kind: "no such call")
            case .notRinging(let state):
                refused("\(verb): call \(id.prefix(8)) is not ringing in (it is \(state.rawValue))", kind: "not ringing")
            }
        case .act(let act):
            session.act(act, on: id, by: .mqtt) { [weak self] report in
                guard let self else { return }
                guard let failure = report.failure else { return self.said.removeAll() }
                let (why, kind) = MQTTCommandTaker.words(failure, id: id)
                let partly = report.tonesSent > 0 ? " (after \(report.tonesSent) tones were sent)" : ""
                self.refused("\(verb): \(why)\(partly)", kind: kind)
            }
        }
    }

    private func refused(_ why: String, kind: String) {
        guard said.insert(kind).inserted else { return }
        report("mqtt: a command on \(topic) was refused: \(why)")
    }

    /// Why an act was not done, and its kind. The stack's own words are quoted, escaped: they
    /// may carry what a caller or a modem put there.
    static func words(_ failure: CallActFailure, id: String) -> (why: String, kind: String) {
        switch failure {
        case .noSuchCall: return ("no live call has the id \(id)", "no such call")
        case .notRinging(let state): return ("call \(id.prefix(8)) is not ringing in (it is \(state.rawValue))", "not ringing")
        case .refusedNumber(let why): return ("\(why)", "tones")
        case .emergencyNumber: return ("an emergency number is never reached from afar", "emergency number")
        case .noSuchModem: return ("no such modem", "no such modem")
        case .modemAmbiguous(let count): return ("\(count) voice modems: name one", "modem ambiguous")
        case .stackRefused(let name, let message):
            return ("the stack refused it: \(printable(name)): \(printable(message))", "stack refused")
        case .stackTimedOut: return ("the stack did not answer in time", "stack timed out")
        case .stackGone: return ("the stack is gone", "stack gone")
        case .stackAnsweredOddly(let what): return ("the stack answered oddly: \(printable(what))", "stack answered oddly")
        }
    }

    /// Printable ASCII as it is; anything else (a newline, an escape, a bidirectional control)
    /// as `\u{…}`, so one refusal is one honest line on stderr.
    static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\\" {
                out.unicodeScalars.append(scalar)
            } else {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return out
    }
}
