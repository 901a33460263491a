/// The event stream's JSON objects of one pipeline event, for every consumer that needs events as
/// JSON (the `--json` stream, MQTT): one place decides which events are data and how they are
/// written, so every consumer carries the same lines.
extension EventSchema {
    /// Calls `body` with each object `event` makes, in order (a batch of call events makes one per
    /// call event that is data; a hook outcome makes none), unfinished: a consumer may add keys of
    /// its own (MQTT's `seq`) after the schema's.
    /// `contact` gives a call's contact (`Delivery.contact(of:)`).
    public func records(of event: PipelineEvent, liveCalls: Int, seconds: RFC3339Seconds? = nil,
                        contact: (String) -> String? = { _ in nil }, _ body: (inout JSONObject) -> Void) {
        var object = JSONObject(seconds: seconds)
        switch event {
        case .calls(let events, let time):
            for call in events {
                object = JSONObject(seconds: seconds)
                if write(call, time: time, liveCalls: liveCalls, contact: call.call.flatMap { contact($0.number) },
                         into: &object) { body(&object) }
            }
        case .run(let run):
            if write(run, liveCalls: liveCalls, into: &object) { body(&object) }
        case .sleep(let sleep):
            if write(sleep, liveCalls: liveCalls, into: &object) { body(&object) }
        case .backend(let notice, let time):
            if write(notice, time: time, into: &object) { body(&object) }
        case .ready(let time):
            writeReady(time: time, liveCalls: liveCalls, into: &object)
            body(&object)
        case .stats(let stats):
            write(stats, liveCalls: liveCalls, into: &object)
            body(&object)
        case .screened(let screened, let time):
            write(screened, time: time, liveCalls: liveCalls, into: &object)
            body(&object)
        case .acted(let acted, let time):
            write(acted, time: time, liveCalls: liveCalls, into: &object)
            body(&object)
        case .hook:
            break
        }
    }
}
