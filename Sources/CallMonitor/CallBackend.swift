// What every backend is. A backend turns one telephony stack's bus traffic into `BackendEvent`s
// for the tracker and `BackendNotice`s for the user. It never prints and never spawns; everything
// runs on the connection's loop thread and every method call it makes is non-blocking.

/// One telephony stack followed on the bus.
public protocol CallBackend: AnyObject {
    var kind: BackendKind { get }
    /// Signals from the service's current owner whose body decoded as expected
    /// (rejected and malformed ones are not counted).
    var decodedSignals: UInt64 { get }
    /// Subscribes, watches the service's name, and syncs whenever an owner appears.
    func start() throws
    /// After a resume: reads every modem and call again; what it finds reaches the tracker as
    /// `learnedOnResume`, to be reconciled with what was known before the sleep.
    func resync()
    /// Stops all delivery: no event or notice after this returns.
    func stop()
    /// Asks the stack to hang the call at `path` up, without waiting: `done(nil)` once it did,
    /// `done(why)` when it refused or could not be asked (polkit, the stack gone). Call screening's
    /// one method call that changes anything (docs/screening.md).
    func hangUp(_ path: String, done: @escaping (String?) -> Void)
}

extension BackendKind {
    /// The well-known bus name the stack owns.
    public var serviceName: String {
        switch self {
        case .modemManager: return ModemManagerBus.service
        case .ofono: return OfonoBus.service
        }
    }
}
