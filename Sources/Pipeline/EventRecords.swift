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
        records(of: event, liveCalls: liveCalls, seconds: seconds, parts: nil, contact: contact, body)
    }

    /// `parts`: the live calls' parts that stay the same, kept by a writer of every line (`EventPipeline`).
    func records(of event: PipelineEvent, liveCalls: Int, seconds: RFC3339Seconds?, parts: CallLineParts?,
                 contact: (String) -> String?, _ body: (inout JSONObject) -> Void) {
        // Each object is made where it is written: none for an event that is not data, and no
        // spare one allocated and thrown away before a batch's first call event.
        func object(_ write: (inout JSONObject) -> Bool) {
            var object = JSONObject(seconds: seconds, parts: parts)
            if write(&object) { body(&object) }
        }
        switch event {
        case .calls(let events, let time):
            for call in events {
                object { write(call, time: time, liveCalls: liveCalls, contactOf: contact, into: &$0) }
            }
        case .run(let run):
            object { write(run, liveCalls: liveCalls, into: &$0) }
        case .sleep(let sleep):
            object { write(sleep, liveCalls: liveCalls, into: &$0) }
        case .backend(let notice, let time):
            object { write(notice, time: time, into: &$0) }
        case .ready(let time):
            object { writeReady(time: time, liveCalls: liveCalls, into: &$0); return true }
        case .stats(let stats):
            object { write(stats, liveCalls: liveCalls, into: &$0); return true }
        case .screened(let screened, let time):
            object { write(screened, time: time, liveCalls: liveCalls, into: &$0); return true }
        case .tones(let heard, let time):
            let named = contact(heard.call.number)
            object { write(heard, time: time, liveCalls: liveCalls, contact: named, into: &$0); return true }
        case .acted(let acted, let time):
            object { write(acted, time: time, liveCalls: liveCalls, into: &$0); return true }
        case .hook:
            break
        }
    }
}
