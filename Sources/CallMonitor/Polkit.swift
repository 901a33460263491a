import DBus

/// polkit's authority on the system bus: polkit(8), org.freedesktop.PolicyKit1.Authority(5).
public enum Polkit {
    public static let service = "org.freedesktop.PolicyKit1"
    public static let authority: ObjectPath = "/org/freedesktop/PolicyKit1/Authority"
    public static let interface = "org.freedesktop.PolicyKit1.Authority"

    enum SubjectKind: String {
        case systemBusName = "system-bus-name"
    }

    /// `CheckAuthorization`'s flags: without AllowUserInteraction (1), polkit asks no agent.
    enum CheckFlags: UInt32 {
        case none = 0
    }

    /// `CheckAuthorization` of `action` for the program behind the bus name `subject` (a unique
    /// name), asking no agent: polkit finds its user and session itself.
    public static func checkAuthorization(_ action: String, subject: String) throws -> Message {
        let message = try Message.methodCall(destination: service, path: authority, interface: interface,
                                             member: "CheckAuthorization")
        let subject = DBusValue.structure([
            .string(SubjectKind.systemBusName.rawValue),
            .dictionary(keySignature: "s", valueSignature: "v", [.init(.string("name"), .variant(.string(subject)))]),
        ])
        try message.append(values: [subject, .string(action), .dictionary(keySignature: "s", valueSignature: "s", []),
                                    .uint32(CheckFlags.none.rawValue), .string("")])
        return message
    }

    /// `CheckAuthorization`'s answer: whether the action is allowed, and whether it would be
    /// after a password (a challenge); nil for a reply that is not `(bba{ss})`.
    public static func result(of reply: Message) -> (authorized: Bool, challenge: Bool)? {
        guard case .structure(let result)? = try? reply.values().first, result.count == 3,
              case .bool(let authorized) = result[0], case .bool(let challenge) = result[1] else { return nil }
        return (authorized, challenge)
    }
}
