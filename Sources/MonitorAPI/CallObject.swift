import CallMonitor
import DBus
import Pipeline

/// One live call as an object of the API: `io.telwatch.Call1` at `MonitorNames.callPath(id:)`,
/// whose read-only properties are the call's as its JSON line has them (the number redacted with
/// `--redact-numbers`). The objects are made when a client asks (`ObjectSubtree`): a call costs
/// the API one dictionary entry until then.
enum CallObject {
    /// What an object made for a request reads its properties from.
    final class Context {
        let call: CallSnapshot
        let schema: EventSchema
        let screening: ScreeningAction?

        init(_ call: CallSnapshot, _ schema: EventSchema, screening: ScreeningAction?) {
            self.call = call
            self.schema = schema
            self.screening = screening
        }
    }

    /// The object of `call`, on the one interface all calls share.
    static func object(_ call: CallSnapshot, interface: ExportedInterface, schema: EventSchema,
                       screening: ScreeningAction?) throws -> ExportedObject {
        ExportedObject(path: try MonitorNames.callPath(id: call.id), interfaces: [interface],
                       context: Context(call, schema, screening: screening))
    }

    /// `io.telwatch.Call1`, made once: its properties read the object's `Context`, its methods
    /// act on the call at the path they were called on (docs/dbus-api.md, "Acts on calls").
    static func makeInterface(acts: APIActs) throws -> ExportedInterface {
        let interface = try ExportedInterface(MonitorNames.callInterface, documentation: documentation)
        for method in methods {
            try interface.addMethod(method.name, in: method.signature, documentation: method.doc,
                                    answeredLater: { [unowned acts] message, reply in
                let values = try message.values()
                guard let act = method.act(values), let options = values.last else {
                    throw DBusError.remote(name: MonitorNames.invalidArgsError, message: "\(method.name) takes '\(method.signature)'")
                }
                try acts.act(act, onObject: message.path, options: options, reply: reply)
            })
        }
        for property in properties {
            try interface.addProperty(property.name, signature: property.signature, documentation: property.doc,
                                      ofObject: { object in
                guard let context = object.context as? Context else { return .string("") }
                return property.value(context.call, context.schema)
            })
        }
        // Not the call's own: screening's word on it, which comes with a `screened` event.
        try interface.addProperty(screeningProperty, signature: "s", documentation: screeningDoc, ofObject: { object in
            .string((object.context as? Context)?.screening?.rawValue ?? "")
        })
        return interface
    }

    /// The properties whose values differ between two snapshots of a call, in the interface's order.
    static func changes(from old: CallSnapshot, to new: CallSnapshot, schema: EventSchema)
        -> [(name: String, value: DBusValue)] {
        var changed: [(name: String, value: DBusValue)] = []
        for property in properties {
            let value = property.value(new, schema)
            if value != property.value(old, schema) { changed.append((property.name, value)) }
        }
        return changed
    }

    /// One act of `Call1`: its arguments, then the options (`a{sv}`).
    struct Method: Sendable {
        let name: String
        let signature: String
        let doc: ExportedInterface.Documentation
        /// The act its arguments ask for.
        let act: @Sendable ([DBusValue]) -> CallAct?
    }

    static let methods: [Method] = [
        Method(name: "Answer", signature: "a{sv}", doc: .init(arguments: ["options"], """
            Answer the call (ringing or waiting). Errors: NotRinging, NoSuchCall, NotPermitted, \
            StackRefused (the stack's words), StackTimedOut, StackGone (io.telwatch.Monitor1.Error.*).
            """)) { _ in .answer },
        Method(name: "Hangup", signature: "a{sv}", doc: .init(arguments: ["options"], """
            End the call, or reject it while it rings. Errors as Answer, but for NotRinging.
            """)) { _ in .hangUp },
        Method(name: "Deflect", signature: "sa{sv}", doc: .init(arguments: ["number", "options"], """
            Send the ringing call on to number (voicemail, another phone) unanswered. The number is \
            dial characters only (RefusedNumber) and never an emergency number (EmergencyNumber). \
            Other errors as Answer.
            """)) { values in values.first?.string.map { .deflect(to: $0) } },
        Method(name: "SendTones", signature: "sa{sv}", doc: .init(arguments: ["digits", "options"], """
            Send DTMF tones on the call, in order: 0-9, *, #, A-D, at most 64 (RefusedNumber). \
            Other errors as Hangup.
            """)) { values in values.first?.string.map { .sendTones($0) } },
    ]

    static let screeningProperty = "Screening"
    static let screeningDoc = """
        What call screening does to the call: reject, deflect, silence, ignore or allow, as its screened \
        event's action; "" while no rule (and no Silence) has spoken of it.
        """

    struct Property: Sendable {
        let name: String
        let signature: String
        let doc: String
        let value: @Sendable (CallSnapshot, EventSchema) -> DBusValue
    }

    static let documentation = """
        One live call, from its first sight to its disconnected event. Every property is the \
        JSON line's field of the same meaning; moments are microseconds since the epoch. The \
        methods act on the call for callers polkit allows (io.telwatch.answer-hangup for Answer \
        and Hangup, io.telwatch.dial for Deflect and SendTones), each reply once the stack has \
        answered; their options: requester, "api" (the default) or "cli".
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
            call, _ in .string(call.modem.eventValue)
        },
        Property(name: "ModemId", signature: "s",
                 doc: "The modem's IMEI or equipment id, \"\" if its stack does not say (modem_id).") {
            call, _ in .string(call.modemIdentity.equipmentID)
        },
        Property(name: "ModemNumber", signature: "s",
                 doc: "The modem's own number, \"\" if unknown; redacted like Number (modem_number).") {
            call, schema in .string(schema.number(call.modemIdentity.ownNumber))
        },
        Property(name: "Operator", signature: "s", doc: "The modem's network operator, \"\" if unknown (operator).") {
            call, _ in .string(call.modemIdentity.operatorName)
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
