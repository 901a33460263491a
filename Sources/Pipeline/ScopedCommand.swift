/// One configured call-scoped command: an argv (never a shell string) and the scope it lives with.
public struct ScopedCommand: Hashable, Sendable {
    public var scope: CallScope
    public var arguments: [String]

    public init(scope: CallScope, arguments: [String]) {
        self.scope = scope
        self.arguments = arguments
    }

    /// `while.ringing` with its program, as said in a line about it.
    var label: String { "while.\(scope.rawValue) (\(arguments.first ?? ""))" }
}
