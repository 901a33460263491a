import CallMonitor

/// An act on a call (or a dial) and what came of it: the `acted` event (docs/user-guide.md,
/// "JSON lines"). Sent into the pipeline once the stack has answered, or once telwatch refused
/// the act itself, whoever asked.
public struct ActedCall: Equatable, Sendable {
    /// What was asked, as the event names it.
    public enum Kind: String, Sendable {
        case answer, hangup, deflect, tones, dial

        public init(_ act: CallAct) {
            switch act {
            case .answer: self = .answer
            case .hangUp: self = .hangup
            case .deflect: self = .deflect
            case .sendTones: self = .tones
            }
        }
    }

    public var kind: Kind
    /// The call asked about (also when no live call has that id); for a dial the new call's id,
    /// once the tracker knows it, else nil.
    public var callID: String?
    /// That call as it was when asked (for a dial, when first seen); nil when there is none.
    public var call: CallSnapshot?
    public var requester: ActRequester
    /// The uid of the local program that asked (the D-Bus caller's); nil when nobody local did
    /// (a rule, MQTT).
    public var uid: UInt32?
    /// The number deflected or dialled to, as it was given (hostile: escaped on every output,
    /// clipped here); nil for the other acts. Tones are never kept: they may be a PIN.
    public var number: String?
    /// The modem a dial was asked for, as given; nil when none was named (and for the other acts).
    public var modem: String?
    public var report: CallActReport

    public init(kind: Kind, callID: String?, call: CallSnapshot?, requester: ActRequester, uid: UInt32?,
                number: String?, modem: String? = nil, report: CallActReport) {
        self.kind = kind
        self.callID = callID.map(ActedCall.clipped)
        self.call = call
        self.requester = requester
        self.uid = uid
        self.number = number.map(ActedCall.clipped)
        self.modem = modem.map(ActedCall.clipped)
        self.report = report
    }

    /// At most this many bytes of what a requester gave are kept (a number is 32 dial characters
    /// at most; what is longer is refused, and shown cut).
    static let keptBytes = 128

    static func clipped(_ text: String) -> String {
        guard text.utf8.count > keptBytes else { return text }
        var kept = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            guard used + size <= keptBytes else { break }
            kept.unicodeScalars.append(scalar)
            used += size
        }
        return kept + "…"
    }

    /// `ok`, or the failure's word.
    public var result: String { report.failure?.word ?? "ok" }

    /// Whether the stack misbehaved (no answer in time, or an answer its interface does not
    /// allow): the one kind of failed act that is also a warning. A refusal, by the stack or by
    /// telwatch, is an answer to whoever asked, not a problem of the service.
    public var isWarning: Bool {
        switch report.failure {
        case .stackTimedOut?, .stackAnsweredOddly?: return true
        default: return false
        }
    }
}

extension CallActFailure {
    /// The failure's name on every output: the `acted` event's `result`, the D-Bus API's error
    /// (in CamelCase there), the command line's message.
    public var word: String {
        switch self {
        case .noSuchCall: return "no-such-call"
        case .notRinging: return "not-ringing"
        case .refusedNumber: return "refused-number"
        case .emergencyNumber: return "emergency-number"
        case .noSuchModem: return "no-such-modem"
        case .modemAmbiguous: return "modem-ambiguous"
        case .stackRefused: return "stack-refused"
        case .stackTimedOut: return "stack-timed-out"
        case .stackGone: return "stack-gone"
        case .stackAnsweredOddly: return "stack-answered-oddly"
        }
    }

    /// The stack's own D-Bus error name, for `stackRefused` only.
    public var stackError: String? {
        if case .stackRefused(let name, _) = self { return name }
        return nil
    }

    /// In words, for people: the stack's own message for `stackRefused` (hostile: escaped by
    /// every output), telwatch's otherwise.
    public var message: String {
        switch self {
        case .noSuchCall: return "no live call has that id"
        case .notRinging(let state): return "the call is not ringing in (it is \(state.rawValue))"
        case .refusedNumber(let why): return "not a number to dial: \(why)"
        case .emergencyNumber: return "an emergency number is never dialled or deflected to from afar"
        case .noSuchModem: return "no voice modem of a followed stack has that path"
        case .modemAmbiguous(let count):
            return count == 0 ? "no voice modem to dial on" : "\(count) voice modems: name the one to dial on"
        case .stackRefused(_, let message): return message
        case .stackTimedOut: return "the stack did not answer in time"
        case .stackGone: return "the stack is not running, or went away before it answered"
        case .stackAnsweredOddly(let what): return "the stack answered oddly: \(what)"
        }
    }
}
