import CDBus
import Glibc
import Loop

/// A match rule and its handler on one connection.
public final class Subscription {
    private weak var connection: Connection?
    public let rule: MatchRule
    let matcher: MessageMatcher
    private let owner: NameOwnerWatch?
    private let onRejected: ((Message) -> Void)?
    private let handler: (Message) -> Void
    public private(set) var isActive = true

    init(connection: Connection, rule: MatchRule, owner: NameOwnerWatch?, onRejected: ((Message) -> Void)?,
         handler: @escaping (Message) -> Void) {
        self.connection = connection
        self.rule = rule
        matcher = MessageMatcher(rule)
        self.owner = owner
        self.onRejected = onRejected
        self.handler = handler
    }

    func deliver(_ message: Message) {
        if let owner, !owner.isOwner(of: message) {
            onRejected?(message)
            return
        }
        handler(message)
    }

    /// Removes the rule from the bus and stops delivery; safe to call twice.
    public func cancel() {
        guard isActive else { return }
        isActive = false
        connection?.unsubscribe(self)
    }
}
