import DBus
import MonitorAPI

/// An act on a live call, as the service's `io.telwatch.Call1` takes it (docs/dbus-api.md): the
/// method and its arguments, which are given as typed (the service checks them).
enum RemoteAct: Equatable {
    case answer
    case hangUp
    case deflect(to: String)
    case tones(String)

    var member: String {
        switch self {
        case .answer: return "Answer"
        case .hangUp: return "Hangup"
        case .deflect: return "Deflect"
        case .tones: return "SendTones"
        }
    }

    /// The call that the act takes when the command names none.
    var defaultCall: CallChoice.Default {
        if case .tones = self { return .active }
        return .ringing
    }

    /// The method call for the call object at `path` of the service `owner`.
    func message(to owner: String, path: ObjectPath) throws -> Message {
        let message = try Message.methodCall(destination: owner, path: path, interface: MonitorNames.callInterface,
                                             member: member)
        switch self {
        case .answer, .hangUp: break
        case .deflect(let number): try message.append(number)
        case .tones(let digits): try message.append(digits)
        }
        try message.append(Self.options)
        return message
    }

    /// Every act method's last argument: who asks, for the `acted` event (docs/dbus-api.md).
    static var options: [String: Variant] { ["requester": Variant("cli")] }

    /// `answered 407e08ae (+15551234)`: what was done, for stdout (escaped).
    func done(_ call: RemoteCall) -> String {
        switch self {
        case .answer: return "answered " + call.described
        case .hangUp: return "hung up " + call.described
        case .deflect(let number): return "deflected " + call.described + " to " + TerminalText.field(number)
        case .tones(let digits): return "sent " + TerminalText.field(digits) + " on " + call.described
        }
    }
}
