import CallMonitor

/// A command taken from `TOPIC/command` with `--mqtt-commands` (docs/mqtt.md, "Commands"): only
/// `silence CALL_ID`, which stops the ring of a live call as the D-Bus API's `Silence` does.
/// Anything else is refused: the topic is writable by whoever the broker lets publish there.
enum MQTTCommand: Equatable {
    case silence(callID: String)

    /// Why a message is not a command telwatch takes.
    enum Refusal: Error, Equatable, Hashable, CustomStringConvertible {
        /// The broker's retained copy of an old message: a command acts when it is sent, not at
        /// every (re)connection.
        case retained
        /// Not `silence CALL_ID` in at most `MQTTCommand.sizeLimit` bytes of text.
        case notACommand

        var description: String {
            switch self {
            case .retained: return "a retained message is not a command (publish commands without retain)"
            case .notACommand: return "only `silence CALL_ID` is taken"
            }
        }
    }

    static let sizeLimit = 128

    static func parse(_ message: MQTTMessage) -> Result<MQTTCommand, Refusal> {
        guard !message.retained else { return .failure(.retained) }
        guard message.payload.count <= sizeLimit, let text = String(validating: message.payload, as: UTF8.self) else {
            return .failure(.notACommand)
        }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
        guard words.count == 2, words[0] == "silence", CallID.isWellFormed(words[1].lowercased()) else {
            return .failure(.notACommand)
        }
        return .success(.silence(callID: words[1].lowercased()))
    }
}
