/// The simulator's script language: one command per line, `#` starts a comment.
/// Calls are named c1, c2, … in the order they are created (`last` is the newest).
public enum SimulatorCommand: Equatable {
    case addModem(model: String)
    case ring(number: String, modem: Int)
    case waiting(number: String, modem: Int)
    case dial(number: String, modem: Int)
    case clip(call: CallReference, number: String)
    case alerting(CallReference)
    case answer(CallReference)
    case hold(CallReference)
    case resume(CallReference)
    case hangup(CallReference)
    case remoteHangup(CallReference)
    case busy(CallReference)
    case missed(CallReference)
    case delete(CallReference)
    /// The far end presses keys on an active call: `DtmfReceived`, as ModemManager passes it on.
    case tones(call: CallReference, dtmf: String)
    case sleep(Double)
    case echo(String)

    public enum CallReference: Equatable {
        case numbered(Int)  // c1 → 1
        case last
    }

    public static let help = """
    simulator script: one command per line; '#' starts a comment. Calls are c1, c2, … in order of creation, or 'last'.
      modem [MODEL]                 add a modem (modem 0 exists from the start)
      ring NUMBER [on N]            an incoming call rings on modem N (default 0); NUMBER '-' = a bare RING, no caller id yet
      waiting NUMBER [on N]         an incoming call waits while another is active
      dial NUMBER [on N]            an outgoing call: created, then dialing
      clip CALL NUMBER              the caller id arrives late (+CLIP after RING)
      alerting CALL                 the far end is ringing
      answer CALL                   the call is connected
      hold CALL | resume CALL       held / active again
      hangup CALL                   hung up here
      remote-hangup CALL            hung up by the far end
      busy CALL                     refused or busy
      missed CALL                   the caller gave up before anyone answered
      delete CALL                   the daemon forgets the ended call (CallDeleted)
      tones CALL DTMF               the far end presses keys on the active call (DtmfReceived): tones as typed,
                                    or a tone's ASCII code as Quectel's modems give it ('35' for '#', which starts a comment)
      sleep SECONDS                 pause
      echo TEXT                     print TEXT
    """

    public struct ParseError: Error, CustomStringConvertible {
        let line: Int
        let message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// Parses a whole script; nil entries are blank or comment lines.
    public static func parse(_ text: String) throws -> [(line: Int, command: SimulatorCommand)] {
        var out: [(Int, SimulatorCommand)] = []
        // "\r\n" is one Character in Swift, so splitting at "\n" alone would read a script saved
        // with CRLF line endings as one long line.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, rawLine) in lines.enumerated() {
            if let command = try parse(line: String(rawLine), number: index + 1) { out.append((index + 1, command)) }
        }
        return out
    }

    public static func parse(line: String, number: Int) throws -> SimulatorCommand? {
        let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let words = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
        guard let verb = words.first?.lowercased() else { return nil }
        let rest = Array(words.dropFirst())
        func fail(_ message: String) -> ParseError { ParseError(line: number, message: message) }
        func call(_ word: String?) throws -> CallReference {
            guard let word else { throw fail("\(verb) needs a call (c1, c2, … or last)") }
            if word == "last" { return .last }
            guard word.first == "c", let index = Int(word.dropFirst()), index > 0 else {
                throw fail("'\(word)' is not a call (c1, c2, … or last)")
            }
            return .numbered(index)
        }
        func numberAndModem() throws -> (String, Int) {
            guard let number = rest.first else { throw fail("\(verb) needs a number") }
            var modem = 0
            if rest.count >= 3, rest[1] == "on" {
                guard let index = Int(rest[2]), index >= 0 else { throw fail("'\(rest[2])' is not a modem number") }
                modem = index
            } else if rest.count > 1 {
                throw fail("unexpected '\(rest[1...].joined(separator: " "))'")
            }
            return (number == "-" ? "" : number, modem)
        }
        func single(_ make: (CallReference) -> SimulatorCommand) throws -> SimulatorCommand {
            guard rest.count <= 1 else { throw fail("\(verb) takes one call") }
            return make(try call(rest.first))
        }
        switch verb {
        case "modem": return .addModem(model: rest.isEmpty ? "Simulated Modem" : rest.joined(separator: " "))
        case "ring": let (n, m) = try numberAndModem(); return .ring(number: n, modem: m)
        case "waiting": let (n, m) = try numberAndModem(); return .waiting(number: n, modem: m)
        case "dial":
            let (n, m) = try numberAndModem()
            guard !n.isEmpty else { throw fail("dial needs a number") }
            return .dial(number: n, modem: m)
        case "clip":
            guard rest.count == 2 else { throw fail("clip takes a call and a number") }
            return .clip(call: try call(rest[0]), number: rest[1])
        case "alerting": return try single(SimulatorCommand.alerting)
        case "answer": return try single(SimulatorCommand.answer)
        case "hold": return try single(SimulatorCommand.hold)
        case "resume": return try single(SimulatorCommand.resume)
        case "hangup": return try single(SimulatorCommand.hangup)
        case "remote-hangup": return try single(SimulatorCommand.remoteHangup)
        case "busy": return try single(SimulatorCommand.busy)
        case "missed": return try single(SimulatorCommand.missed)
        case "delete": return try single(SimulatorCommand.delete)
        case "tones":
            guard rest.count == 2 else { throw fail("tones takes a call and the tones") }
            return .tones(call: try call(rest[0]), dtmf: rest[1])
        case "sleep":
            guard rest.count == 1, let seconds = Double(rest[0]), seconds >= 0, seconds < 86_400 else {
                throw fail("sleep takes a number of seconds")
            }
            return .sleep(seconds)
        case "echo": return .echo(rest.joined(separator: " "))
        default: throw fail("unknown command '\(verb)' (see telwatch simulate --help)")
        }
    }
}
