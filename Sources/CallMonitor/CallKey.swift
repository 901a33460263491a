/// Identity of a call on the bus: backend + object path. Paths are REUSED, so this is not the
/// call's id (`CallSnapshot.id` is).
public struct CallKey: Hashable, Sendable {
    public var backend: BackendKind
    public var path: String

    public init(backend: BackendKind, path: String) {
        self.backend = backend
        self.path = path
    }
}
