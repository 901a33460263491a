import CallMonitor

/// A command taken from `TOPIC/command` with `--mqtt-commands` (docs/mqtt.md, "Commands"):
/// `silence`, `hangup` (or `reject`) and `answer` of a call named by its id or as `ringing`, and
/// `tones CALL_ID DIGITS`. Anything else is refused: the topic is writable by whoever the broker
/// lets publish there, so the payload is hostile input, never printed as it came.
struct MQTTCommand: Equatable {
    var verb: Verb
    var call: MQTTCallChoice
    var action: Action

    /// The command's first word.
    enum Verb: String, CaseIterable {
        case silence, hangup, reject, answer, tones
        /// Never taken over MQTT: named so their refusal says why (docs/mqtt.md, "Commands").
        case dial, deflect

        var takenOverMQTT: Bool { self != .dial && self != .deflect }

        /// What it takes after itself, as said in a refusal.
        var usage: String {
            self == .tones ? "`tones CALL_ID DIGITS`" : "`\(rawValue) CALL_ID` or `\(rawValue) \(MQTTCallChoice.ringingWord)`"
        }
    }

    /// What it asks of the call: the user's silence, or an act on the stack. `tones` carries its
    /// digits as `DialString` left them (checked here, and again by `CallMonitor.act`).
    enum Action: Equatable {
        case silence
        case act(CallAct)
    }

    /// The payload Home Assistant's buttons send (`payload_press`): the verb on the one ringing call.
    static func pressPayload(_ verb: Verb) -> String { "\(verb.rawValue) \(MQTTCallChoice.ringingWord)" }

    /// Why a message is not a command telwatch takes. Nothing of the payload is in the words but
    /// what `DialStringRefusal` says of a character (a code point for anything not plainly printable).
    enum Refusal: Error, Equatable, CustomStringConvertible {
        /// The broker's retained copy of an old message: a command acts when it is sent, not at
        /// every (re)connection.
        case retained
        /// More than `MQTTCommand.sizeLimit` bytes, or not UTF-8.
        case notText
        /// A first word that is no verb.
        case notACommand
        /// A verb with the wrong words after it.
        case malformed(Verb)
        /// `dial` or `deflect`: they would call, or send a caller to, a number of the sender's choosing.
        case notOverMQTT(Verb)
        /// `tones` with something that is not a string of DTMF tones.
        case tones(DialStringRefusal)

        var description: String {
            switch self {
            case .retained: return "a retained message is not a command (publish commands without retain)"
            case .notText: return "a command is UTF-8 text of at most \(MQTTCommand.sizeLimit) bytes"
            case .notACommand:
                return "only `silence`, `hangup` (or `reject`), `answer` and `tones` are taken"
            case .malformed(let verb): return "\(verb.rawValue) takes \(verb.usage)"
            case .notOverMQTT(let verb):
                return "\(verb.rawValue) is not taken over MQTT (it would reach a number of the sender's choosing); "
                    + "use the D-Bus API or the command line"
            case .tones(let why): return "tones: \(why)"
            }
        }

        /// Said once until a command works: a flood of one bad command is one line.
        var kind: String {
            switch self {
            case .tones: return "tones"
            case .malformed(let verb): return "malformed \(verb.rawValue)"
            default: return description
            }
        }
    }

    static let sizeLimit = 128

    static func parse(_ message: MQTTMessage) -> Result<MQTTCommand, Refusal> {
        guard !message.retained else { return .failure(.retained) }
        guard message.payload.count <= sizeLimit, let text = String(validating: message.payload, as: UTF8.self) else {
            return .failure(.notText)
        }
        // `isNewline`: "\r\n" is one Character, neither "\r" nor "\n".
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline })
        guard let first = words.first, let verb = Verb(rawValue: String(first)) else { return .failure(.notACommand) }
        guard verb.takenOverMQTT else { return .failure(.notOverMQTT(verb)) }
        let expected = verb == .tones ? 3 : 2
        guard words.count == expected, let call = MQTTCallChoice(words[1]) else { return .failure(.malformed(verb)) }
        switch verb {
        case .silence: return .success(MQTTCommand(verb: verb, call: call, action: .silence))
        case .hangup, .reject: return .success(MQTTCommand(verb: verb, call: call, action: .act(.hangUp)))
        case .answer: return .success(MQTTCommand(verb: verb, call: call, action: .act(.answer)))
        case .tones:
            // Tones go to a call in talk: one that rings cannot take them.
            guard call != .ringing else { return .failure(.malformed(verb)) }
            do {
                let tones = try DialString(tones: String(words[2]))
                return .success(MQTTCommand(verb: verb, call: call, action: .act(.sendTones(tones.value))))
            } catch {
                return .failure(.tones(error))
            }
        case .dial, .deflect:
            return .failure(.notOverMQTT(verb))
        }
    }
}

/// The call a command names: by its call id, or `ringing`, the one call ringing now (what Home
/// Assistant's buttons send: a button's payload is fixed).
enum MQTTCallChoice: Equatable {
    /// A well-formed call id, lowercase.
    case id(String)
    case ringing

    static let ringingWord = "ringing"

    init?(_ word: Substring) {
        if word == MQTTCallChoice.ringingWord {
            self = .ringing
        } else if CallID.isWellFormed(word.lowercased()) {
            self = .id(word.lowercased())
        } else {
            return nil
        }
    }
}
