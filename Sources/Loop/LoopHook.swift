/// Something that must run around every wait of the loop: a D-Bus connection folds its
/// queued messages and its own timeouts into the loop this way.
public protocol LoopHook: AnyObject {
    /// Where this hook's `prepare` runs among the others.
    var phase: TurnPhase { get }
    /// Runs before the loop waits, in phase order; returns the monotonic deadline by which
    /// `afterWait` must run, if any.
    func prepare() -> Double?
    /// Runs after every wait.
    func afterWait(now: Double)
}
