import CDBus
import Glibc

/// A D-Bus match rule built from typed fields. `description` is the rule string sent to the bus,
/// with every value quoted; `matches` applies the same rule locally to route delivered messages.
public struct MatchRule: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable { case signal, methodCall = "method_call", methodReturn = "method_return", error }

    public var type: Kind?
    /// A unique name, or a well-known name that the bus resolves to its current owner.
    public var sender: String?
    public var path: String?
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    public var destination: String?
    /// `argN='value'` string matches, by argument index (0–63).
    public var arguments: [Int: String]

    public init(
        type: Kind? = .signal, sender: String? = nil, path: String? = nil, pathNamespace: String? = nil,
        interface: String? = nil, member: String? = nil, destination: String? = nil, arguments: [Int: String] = [:]
    ) {
        self.type = type
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.destination = destination
        self.arguments = arguments
    }

    /// The rule string. Values are single-quoted; a quote inside a value is written as `'\''`
    /// (close the quote, an escaped quote, reopen), the only escape the rule syntax has.
    public var description: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append(key + "=" + MatchRule.quote(value))
        }
        add("type", type?.rawValue)
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("destination", destination)
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
        return parts.joined(separator: ",")
    }

    static func quote(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Local routing of a message the bus delivered (see `MessageMatcher`).
    public func matches(_ message: Message) -> Bool { MessageMatcher(self).matches(message) }
}

