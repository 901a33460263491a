import DBus

/// A backend as its `ServiceLink` runs it: the link does what every stack needs (the owner, its
/// syncs, stopping), the backend only what is its stack's own.
protocol LinkedBackend: CallBackend {
    var link: ServiceLink { get }
    /// Subscribes (through `link`) to the stack's signals.
    func subscribe()
    /// The calls followed now: a sync expects to find each of them listed again.
    var followedCalls: [String] { get }
    /// Sends `round`'s first listing (through `link`, so that the round counts it).
    func sync(_ round: SyncRound)
    /// Drops every modem and call: the owner went away, or the backend stops.
    func forgetAll()
    /// A call known before `round` that neither a listing nor a signal has vouched for since:
    /// dropped, and the event that ends it; nil when the backend keeps it.
    func unconfirmedGone(_ path: String) -> BackendEvent?
    /// The interface of a call object, whose `Hangup` ends it.
    static var callInterface: String { get }
}

extension LinkedBackend {
    public var kind: BackendKind { link.kind }
    public func start() throws { try link.start(self) }
    public func resync() { link.resync() }
    public func stop() { link.stop() }

    public func hangUp(_ path: String, done: @escaping (String?) -> Void) {
        link.call(path: path, interface: Self.callInterface, member: "Hangup", timeout: 5, priority: .urgent) { result in
            switch result {
            case .success: done(nil)
            case .failure(let error): done(error.description)
            }
        }
    }
}
