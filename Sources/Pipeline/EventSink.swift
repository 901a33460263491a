/// One consumer of the pipeline's events: output, runs, hooks, and whatever comes next. A sink
/// has one job; it never calls back into whoever produced an event. What it causes (a run event,
/// a hook outcome) is sent into the pipeline by its producer and reaches every sink after the
/// event that caused it.
public protocol EventSink: AnyObject {
    /// One event, as stamped at the pipeline's entrance (`Delivery`).
    func receive(_ delivery: Delivery)
    /// telwatch is stopping: finish what was started, then call `done` once (within a bound the
    /// sink documents). Events may still arrive (the run's end, the exit line).
    func finish(then done: @escaping () -> Void)
}

extension EventSink {
    public func finish(then done: @escaping () -> Void) { done() }
}
