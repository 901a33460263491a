import Contacts

/// The one road every event takes: an ordered list of sinks. Each event reaches every sink in
/// that order before the next event reaches any; an event sent while one is being delivered (a
/// `run-started` caused by an `incoming`) waits its turn, so every sink sees events in the same
/// order. Where the order is chosen, and why, is `docs/ARCHITECTURE.md` ("The pipeline").
/// Everything happens on the loop thread. Each event is stamped once as it is sent (a `Delivery`:
/// the live calls, its contacts, its JSON objects when a sink asks), and every sink reads that.
public final class EventPipeline {
    private var sinks: [EventSink] = []
    private var queue: [Delivery] = []
    private var isDelivering = false
    private var isFinishing = false
    private let liveCalls: () -> Int
    /// The keys and redaction of every delivery's JSON objects: a reloaded configuration changes it.
    public var schema: EventSchema
    private let contacts: ContactDirectory?
    private let seconds = RFC3339Seconds()
    /// What stays the same of each live call's lines, kept from one to the next (bounded by the live calls).
    private let lineParts = CallLineParts()

    /// `liveCalls` tells how many calls are live now; every event is stamped with it when sent,
    /// and with the contacts (`--contacts`) of the numbers it names.
    public init(liveCalls: @escaping () -> Int, schema: EventSchema = EventSchema(), contacts: ContactDirectory? = nil) {
        self.liveCalls = liveCalls
        self.schema = schema
        self.contacts = contacts
    }

    /// Adds a sink after those already there.
    public func append(_ sink: EventSink) {
        sinks.append(sink)
    }

    public func send(_ event: PipelineEvent) {
        let delivery = Delivery(event, liveCalls: liveCalls(), schema: schema, contacts: contacts, seconds: seconds,
                                parts: lineParts)
        guard !isDelivering else { return queue.append(delivery) }
        // The usual event causes none: it goes straight through, and the queue is only touched
        // (and emptied) when a sink did send one meanwhile.
        isDelivering = true
        deliver(delivery)
        var next = 0
        while next < queue.count {
            let waiting = queue[next]
            next += 1
            deliver(waiting)
        }
        if next > 0 { queue.removeAll(keepingCapacity: true) }
        isDelivering = false
    }

    private func deliver(_ delivery: Delivery) {
        for sink in sinks { sink.receive(delivery) }
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
