/// What happened to a well-known name's owner.
public enum NameOwnerEvent: Equatable, Sendable {
    /// The name has an owner now (at start, or newly): its unique name.
    case appeared(String)
    /// The owner went away (the process exited or released the name).
    case vanished(String)
    /// At start the name had no owner.
    case absent
}

/// Follows the unique owner of a well-known name (`GetNameOwner`, then `NameOwnerChanged`),
/// so a consumer can tell whether a message came from the name's current owner.
public final class NameOwnerWatch {
    public let name: String
    public private(set) var owner: String?
    /// False until the first answer from the bus.
    public private(set) var isResolved = false
    private var subscription: Subscription?
    private var heardChange = false

    init(connection: Connection, name: String, handler: @escaping (NameOwnerEvent) -> Void) throws {
        try DBusName.check(busName: name)
        self.name = name
        // Subscribe first, then ask: the bus handles our messages in order, so no change can fall between.
        let rule = MatchRule(
            sender: BusDaemon.name, path: BusDaemon.path.rawValue, interface: BusDaemon.interface,
            member: "NameOwnerChanged", arguments: [0: name])
        subscription = connection.subscribe(rule) { [weak self, weak connection] message in
            guard let self else { return }
            guard let (_, old, new) = try? message.decode(String.self, String.self, String.self) else {
                // Only the bus sends it: a change the watch cannot read is said, and the owner stays.
                connection?.onWarning("NameOwnerChanged of \(name) came as '\(message.signature)', not 'sss': not used")
                return
            }
            self.heardChange = true
            self.isResolved = true
            self.owner = new.isEmpty ? nil : new
            if !old.isEmpty { handler(.vanished(old)) }
            if !new.isEmpty { handler(.appeared(new)) }
        }
        let query = try Message.methodCall(
            destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface, member: "GetNameOwner")
        try query.append(name)
        connection.call(query) { [weak self] result in
            // A NameOwnerChanged that arrived first is newer than this answer.
            guard let self, !self.heardChange else { return }
            self.isResolved = true
            if case .success(let reply) = result, let unique = try? reply.decode(String.self) {
                self.owner = unique
                handler(.appeared(unique))
            } else {
                self.owner = nil
                handler(.absent)
            }
        }
    }

    /// True when `sender` is the name's current owner.
    public func isOwner(_ sender: String?) -> Bool {
        guard let sender, let owner else { return false }
        return sender == owner
    }

    /// True when `message` was sent by the name's current owner: its sender compared in place,
    /// with no string made (every signal a subscription delivers is checked).
    func isOwner(of message: Message) -> Bool {
        guard let owner else { return false }
        return message.headerField(.sender, equals: owner)
    }

    public func cancel() {
        subscription?.cancel()
        subscription = nil
    }
}
