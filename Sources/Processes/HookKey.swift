/// The line a hook waits in: hooks under one key run one after another, in the order their events
/// arrived. A key is its owner (the type whose hooks they are: a call's, the run's) and a name
/// within it, so two owners' lines never meet whatever their names are.
public struct HookKey: Hashable, Sendable, CustomStringConvertible {
    private let owner: ObjectIdentifier
    private let ownerName: String
    /// The name within the owner (a call's id; "" for an owner with one line).
    public let name: String

    public init<Owner>(_ owner: Owner.Type, _ name: String = "") {
        self.owner = ObjectIdentifier(owner)
        // The runtime's name of the type, as `String(describing:)` gives it, without the dynamic
        // casts that look for a description first (over a million instructions, on the first ring).
        ownerName = _typeName(owner, qualified: false)
        self.name = name
    }

    public var description: String { name.isEmpty ? ownerName : ownerName + " " + name }
}
