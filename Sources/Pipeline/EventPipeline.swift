/// The one road every event takes: an ordered list of sinks. Each event reaches every sink in
/// that order before the next event reaches any; an event sent while one is being delivered (a
/// `run-started` caused by an `incoming`) waits its turn, so every sink sees events in the same
/// order. Where the order is chosen, and why, is `docs/ARCHITECTURE.md` ("The pipeline").
/// Everything happens on the loop thread; nothing here allocates per event beyond the queue.
public final class EventPipeline {
    private var sinks: [EventSink] = []
    private var queue: [(event: PipelineEvent, liveCalls: Int)] = []
    private var isDelivering = false
    private var isFinishing = false
    private let liveCalls: () -> Int

    /// `liveCalls` tells how many calls are live now; every event is stamped with it when sent.
    public init(liveCalls: @escaping () -> Int) {
        self.liveCalls = liveCalls
    }

    /// Adds a sink after those already there.
    public func append(_ sink: EventSink) {
        sinks.append(sink)
    }

    public func send(_ event: PipelineEvent) {
        queue.append((event, liveCalls()))
        guard !isDelivering else { return }
        isDelivering = true
        var next = 0
        while next < queue.count {
            let (event, live) = queue[next]
            next += 1
            for sink in sinks { sink.receive(event, liveCalls: live) }
        }
        queue.removeAll(keepingCapacity: true)
        isDelivering = false
    }

    /// Finishes the sinks one after another, in pipeline order (the runs end before the hooks
    /// are waited for); `done` runs once the last has finished.
    public func finish(then done: @escaping () -> Void) {
        guard !isFinishing else { return }
        isFinishing = true
        finish(from: 0, then: done)
    }

    private func finish(from index: Int, then done: @escaping () -> Void) {
        guard index < sinks.count else { return done() }
        sinks[index].finish { [weak self] in self?.finish(from: index + 1, then: done) }
    }
}
