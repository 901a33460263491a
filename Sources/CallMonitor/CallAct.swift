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
