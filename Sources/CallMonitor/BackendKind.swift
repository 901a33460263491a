/// Which telephony stack a call comes from.
public enum BackendKind: String, Sendable, CaseIterable {
    case modemManager = "modemmanager"
    case ofono = "ofono"
}
