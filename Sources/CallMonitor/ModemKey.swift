/// A modem of one stack: its identity is looked up by this, not by path alone (both stacks may
/// use the same path).
struct ModemKey: Hashable, Sendable {
    var backend: BackendKind
    var path: String
}
