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
