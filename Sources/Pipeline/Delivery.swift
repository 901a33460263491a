import CallMonitor
import Contacts

/// One event as every sink receives it, stamped once at the pipeline's entrance
/// (docs/ARCHITECTURE.md, "The pipeline"): the event with its one time, the number of calls live
/// once it happened, the contact of each number it names (looked up once, not once a sink), and
/// its JSON objects, the event stream's lines, built on the first ask and shared by every sink
/// that writes them (the `--json` stream and MQTT), never built when none does.
public final class Delivery {
    public let event: PipelineEvent
    /// Calls live once the event happened.
    public let liveCalls: Int
    /// The keys and redaction of the event's JSON objects (`records`).
    public let schema: EventSchema
    private let contacts: [(number: String, name: String?)]
    private let seconds: RFC3339Seconds?
    private let parts: CallLineParts?
    private var built: [JSONObject]?

    /// `contacts`: the book the numbers are looked up in, once each, now.
    public convenience init(_ event: PipelineEvent, liveCalls: Int, schema: EventSchema = EventSchema(),
                contacts: ContactDirectory? = nil, seconds: RFC3339Seconds? = nil) {
        self.init(event, liveCalls: liveCalls, schema: schema, contacts: contacts, seconds: seconds, parts: nil)
    }

    /// `parts`: the live calls' line parts that stay the same (`CallLineParts`), kept by the pipeline.
    init(_ event: PipelineEvent, liveCalls: Int, schema: EventSchema, contacts: ContactDirectory?,
         seconds: RFC3339Seconds?, parts: CallLineParts?) {
        self.event = event
        self.liveCalls = liveCalls
        self.schema = schema
        self.seconds = seconds
        self.parts = parts
        self.contacts = contacts.map { Delivery.lookUp(event, in: $0) } ?? []
    }

    /// The contact's name for a number of this event's calls; nil for none (or no contacts).
    public func contact(of number: String) -> String? {
        for entry in contacts where entry.number == number { return entry.name }
        return nil
    }

    /// The event's JSON objects, in order: one per call event that is data (`EventSchema`), none
    /// for a hook's outcome. Unfinished: a sink may add keys of its own to its copy (MQTT's `seq`).
    public var records: [JSONObject] {
        if let built { return built }
        var objects: [JSONObject] = []
        schema.records(of: event, liveCalls: liveCalls, seconds: seconds, parts: parts, contact: contact(of:)) {
            objects.append($0)
        }
        built = objects
        return objects
    }

    private static func lookUp(_ event: PipelineEvent, in directory: ContactDirectory) -> [(number: String, name: String?)] {
        var found: [(number: String, name: String?)] = []
        func add(_ number: String) {
            guard !number.isEmpty, !found.contains(where: { $0.number == number }) else { return }
            found.append((number, directory.name(for: number)))
        }
        switch event {
        case .calls(let events, _):
            for event in events { if let call = event.call { add(call.number) } }
        case .screened(let screened, _):
            add(screened.call.number)
        case .tones(let heard, _):
            add(heard.call.number)
        default:
            break
        }
        return found
    }
}
