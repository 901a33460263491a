/// Which stacks to follow.
public enum BackendSelection: String, Sendable, CaseIterable {
    /// Both, each as soon as it is running (and again after it restarts).
    case auto
    case modemManager = "modemmanager"
    case ofono

    public var kinds: [BackendKind] {
        switch self {
        case .auto: return [.modemManager, .ofono]
        case .modemManager: return [.modemManager]
        case .ofono: return [.ofono]
        }
    }
}
