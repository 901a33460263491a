// What telwatch can be asked to do to a call, and what came of it (docs/modem-stacks.md §13).

/// An act on one live call. Numbers and tones are given as received: `CallMonitor.act` checks
/// them (`DialString`, `EmergencyDial`) before anything reaches the stack.
public enum CallAct: Equatable, Sendable {
    /// Answers an incoming or waiting call. A waiting call (one that rings while another is
    /// connected on its modem) is answered as phones do: the connected call is put on hold
    /// (`CallActReport.held` names it).
    case answer
    case hangUp
    /// Sends an incoming or waiting call on to `to` (voicemail, another phone) unanswered.
    case deflect(to: String)
    /// Sends DTMF tones on a call, in order.
    case sendTones(String)

    /// Whether only a call that rings (incoming or waiting) can take it.
    var needsRinging: Bool {
        switch self {
        case .answer, .deflect: return true
        case .hangUp, .sendTones: return false
        }
    }
}

/// Why an act (or a dial) was not done.
public enum CallActFailure: Error, Equatable, Sendable {
    /// No live call of a followed stack has this key.
    case noSuchCall
    /// Answer or deflect on a call that is not incoming or waiting (its state now).
    case notRinging(CallState)
    /// The number or the tones are not dial characters only.
    case refusedNumber(DialStringRefusal)
    /// The number is one a modem would dial as an emergency call.
    case emergencyNumber
    /// Dial or hang up all: the modem named is not a voice modem of a followed stack (hang up
    /// all: there is none at all); answering a waiting call: its modem cannot be told.
    case noSuchModem
    /// Dial without a modem named, and there is not exactly one voice modem (how many there are).
    case modemAmbiguous(count: Int)
    /// The stack answered with an error: its own D-Bus error name and message.
    case stackRefused(name: String, message: String)
    /// The stack did not answer in time.
    case stackTimedOut
    /// The stack is not followed, not running, or went away before it answered.
    case stackGone
    /// The stack answered something that is not what its interface says.
    case stackAnsweredOddly(String)
}

/// What an act or a dial came to.
public struct CallActReport: Equatable, Sendable {
    /// The call dialled, or the call acted on.
    public var outcome: Result<CallKey, CallActFailure>
    /// Seconds from the request to the stack's last answer; 0 when refused before asking it.
    public var elapsed: Double
    /// Tones the stack accepted, in order (`sendTones` on ModemManager sends one at a time and
    /// stops at the first refusal); 0 for other acts.
    public var tonesSent: Int
    /// The calls put on hold by answering a waiting call (the active calls of its modem as
    /// telwatch knew them when asked); empty for other acts, and when the act failed.
    public var held: [CallKey]

    public init(_ outcome: Result<CallKey, CallActFailure>, elapsed: Double = 0, tonesSent: Int = 0,
                held: [CallKey] = []) {
        self.outcome = outcome
        self.elapsed = elapsed
        self.tonesSent = tonesSent
        self.held = held
    }

    public var failure: CallActFailure? {
        if case .failure(let failure) = outcome { return failure }
        return nil
    }
}

/// What hanging up every call of a modem (or of every modem) came to.
public struct HangUpAllReport: Equatable, Sendable {
    /// The modems whose stack hung up all their calls, as `stack`/`path`, in the order asked; or
    /// the first refusal (the modems after it are not asked).
    public var outcome: Result<[HungUpModem], CallActFailure>
    /// Seconds from the request to the stack's last answer; 0 when refused before asking it.
    public var elapsed: Double

    public init(_ outcome: Result<[HungUpModem], CallActFailure>, elapsed: Double = 0) {
        self.outcome = outcome
        self.elapsed = elapsed
    }

    public var failure: CallActFailure? {
        if case .failure(let failure) = outcome { return failure }
        return nil
    }
}

/// One modem whose calls were all hung up.
public struct HungUpModem: Hashable, Sendable {
    public var stack: BackendKind
    public var path: String

    public init(stack: BackendKind, path: String) {
        self.stack = stack
        self.path = path
    }
}
