import DBus

/// polkit's authority on the system bus: polkit(8), org.freedesktop.PolicyKit1.Authority(5).
enum Polkit {
    static let service = "org.freedesktop.PolicyKit1"
    static let authority: ObjectPath = "/org/freedesktop/PolicyKit1/Authority"
    static let interface = "org.freedesktop.PolicyKit1.Authority"

    enum SubjectKind: String {
        case systemBusName = "system-bus-name"
    }

    /// `CheckAuthorization`'s flags: without AllowUserInteraction (1), polkit asks no agent.
    enum CheckFlags: UInt32 {
        case none = 0
    }
}
