import CallMonitor

/// Which calls a call-scoped command lives with (`while.SCOPE = CMD ARGS…`): the calls in one
/// finer state, or every live call.
public enum CallScope: String, CaseIterable, Sendable {
    case ringing, waiting, dialing, alerting, active, held
    /// Any live call, whatever its state.
    case live

    /// The one finer state of the scope; nil for `live`.
    var detail: CallDetail? { CallDetail(rawValue: rawValue) }

    func includes(_ detail: CallDetail?) -> Bool {
        guard let detail else { return false }
        return self == .live || self.detail == detail
    }
}
