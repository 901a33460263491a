import CallMonitor
import DBus
import Pipeline

/// One live call as an object of the API: `io.telwatch.Call1` at `MonitorNames.callPath(id:)`,
/// whose read-only properties are the call's as its JSON line has them (the number redacted with
/// `--redact-numbers`).
final class CallObject {
    let object: ExportedObject
    private(set) var call: CallSnapshot
    private let schema: () -> EventSchema

    /// `interface`: the one `io.telwatch.Call1` every call object shares (`makeInterface`), so
    /// that a call's object costs one allocation and no closure.
    init(_ call: CallSnapshot, interface: ExportedInterface, schema: @escaping () -> EventSchema) throws {
        self.call = call
        self.schema = schema
        object = ExportedObject(path: try MonitorNames.callPath(id: call.id), interfaces: [interface], context: Box())
        (object.context as? Box)?.call = self
    }

    /// The link from an object to its call, weak: the call owns its object, not the reverse.
    final class Box {
        weak var call: CallObject?
    }

    static func makeInterface() throws -> ExportedInterface {
        let interface = try ExportedInterface(MonitorNames.callInterface, documentation: CallObject.documentation)
        for property in CallObject.properties {
            try interface.addProperty(property.name, signature: property.signature, documentation: property.doc,
                                      ofObject: { object in
                guard let call = (object.context as? Box)?.call else { return .string("") }
                return property.value(call.call, call.schema())
            })
        }
        return interface
    }

    /// Takes the call's new snapshot; returns the properties whose values changed, when asked
    /// (only while someone listens: with nobody subscribed an update is one assignment).
    func update(_ new: CallSnapshot, tellingChanges: Bool) -> [(name: String, value: DBusValue)] {
        let old = call
        call = new
        guard tellingChanges else { return [] }
        let schema = schema()
        var changed: [(name: String, value: DBusValue)] = []
        for property in CallObject.properties {
            let value = property.value(new, schema)
            if value != property.value(old, schema) { changed.append((property.name, value)) }
        }
        return changed
    }

    struct Property: Sendable {
        let name: String
        let signature: String
        let doc: String
        let value: @Sendable (CallSnapshot, EventSchema) -> DBusValue
    }

    static let documentation = """
        One live call, from its first sight to its disconnected event. Every property is the \
        JSON line's field of the same meaning; moments are microseconds since the epoch.
        """

    static let properties: [Property] = [
        Property(name: "Id", signature: "s", doc: "The call's id (call_id): a UUID, new for every call.") {
            call, _ in .string(call.id)
        },
        Property(name: "State", signature: "s", doc: "incoming, dialing or connected (state).") {
            call, _ in .string(call.state.rawValue)
        },
        Property(name: "Detail", signature: "s",
                 doc: "ringing, waiting, dialing, alerting, active or held (detail).") {
            call, _ in .string(call.detail?.rawValue ?? "")
        },
        Property(name: "Direction", signature: "s", doc: "incoming, outgoing or unknown (direction).") {
            call, _ in .string(call.direction.rawValue)
        },
        Property(name: "Number", signature: "s",
                 doc: "The caller id as the stack gave it, \"\" if unknown; with --redact-numbers only its last two digits (number).") {
            call, schema in .string(schema.number(call.number))
        },
        Property(name: "Name", signature: "s", doc: "The caller's name from the network, often \"\" (name).") {
            call, _ in .string(call.name)
        },
        Property(name: "Backend", signature: "s", doc: "modemmanager or ofono (backend).") {
            call, _ in .string(call.key.backend.rawValue)
        },
        Property(name: "Modem", signature: "s", doc: "The modem's object path at its stack, \"\" if unknown (modem).") {
            call, _ in .string(call.modem)
        },
        Property(name: "StackPath", signature: "s", doc: "The call's object path at its stack (path).") {
            call, _ in .string(call.key.path)
        },
        Property(name: "FirstSeen", signature: "t", doc: "When telwatch first saw the call (first_seen).") {
            call, _ in .uint64(JSONObject.microseconds(of: call.firstSeen))
        },
        Property(name: "ConnectedAt", signature: "t", doc: "When it was answered; 0 while it has not been (connected_at).") {
            call, _ in .uint64(call.connectedAt.map(JSONObject.microseconds(of:)) ?? 0)
        },
        Property(name: "Initial", signature: "b", doc: "Already live when telwatch started (initial).") {
            call, _ in .bool(call.initial)
        },
        Property(name: "Multiparty", signature: "b", doc: "Part of a conference call (multiparty).") {
            call, _ in .bool(call.multiparty)
        },
    ]
}
