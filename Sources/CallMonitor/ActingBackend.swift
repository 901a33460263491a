import DBus

/// An act whose number or tones passed `DialString` and `EmergencyDial`: the only kind a
/// backend is given.
enum CheckedAct {
    case answer
    /// Answers the waiting call on `modem`, putting its active calls on hold.
    case holdAndAnswer(modem: String)
    case hangUp
    case deflect(DialString)
    case sendTones(DialString)
}

/// A backend that acts on calls for `CallMonitor.act` and `dial`, through its stack's own
/// methods (docs/modem-stacks.md §13). As every method call of a backend: non-blocking, through
/// its `ServiceLink`; `done` runs once, unless the stack goes away first (`CallMonitor` then
/// answers for it).
protocol ActingBackend: LinkedBackend {
    /// The modems a call can be placed on now, sorted.
    var voiceModemPaths: [String] { get }
    /// The modem `call` is on; nil when it cannot be told.
    func actingModem(of call: CallSnapshot) -> String?
    /// `done(result, tones the stack accepted)`.
    func perform(_ act: CheckedAct, on call: CallSnapshot,
                 done: @escaping (Result<Void, CallActFailure>, Int) -> Void)
    /// Places a call on `modem`; `done` gets the new call's object path.
    func dial(_ number: DialString, modem: String, done: @escaping (Result<String, CallActFailure>) -> Void)
    /// Hangs up the calls of `modem` with the stack's own hang-up-all.
    func hangUpAll(modem: String, done: @escaping (Result<Void, CallActFailure>) -> Void)
}

extension LinkedBackend {
    /// One method call of an act: sent before routine reads, its error in an act's words.
    func actCall(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
                 reply: @escaping (Result<Message, CallActFailure>) -> Void) {
        link.call(path: path, interface: interface, member: member, arguments: arguments,
                  timeout: CallActFailure.stackTimeout, priority: .urgent) { result in
            reply(result.mapError(CallActFailure.init))
        }
    }
}

extension CallActFailure {
    /// How long a stack may take over one method call of an act: ModemManager answers `Start`
    /// and `Accept` only once the modem answered its AT command.
    static let stackTimeout = 30.0

    init(_ error: DBusError) {
        switch error {
        case .remote(let name, _) where name == "org.freedesktop.DBus.Error.ServiceUnknown"
            || name == "org.freedesktop.DBus.Error.NameHasNoOwner":
            self = .stackGone
        case .remote(let name, let message):
            self = .stackRefused(name: CallText.clip(name), message: CallText.clip(message, CallText.maxBytes))
        case .timedOut: self = .stackTimedOut
        case .disconnected: self = .stackGone
        case .signatureMismatch, .typeMismatch, .invalidArgument, .connectionFailed:
            self = .stackAnsweredOddly(CallText.clip(error.description))
        }
    }
}
