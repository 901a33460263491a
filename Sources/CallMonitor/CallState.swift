/// The four per-call states telwatch reports.
public enum CallState: String, Sendable, CaseIterable {
    case incoming, dialing, connected, disconnected
}

/// The finer backend state kept alongside a live `CallState`.
public enum CallDetail: String, Sendable, CaseIterable {
    case ringing, waiting, dialing, alerting, active, held
}

