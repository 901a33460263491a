import CallMonitor
import DBus

/// A live call of the running service: the call as its `io.telwatch.Call1` properties tell it,
/// and that object's path, where its acts are asked.
struct RemoteCall {
    let path: ObjectPath
    let call: CallSnapshot

    /// `407e08ae`, as `status` and the event stream show a call.
    var shortID: String { String(call.id.prefix(8)) }

    /// `407e08ae (+15551234)`, for a line about the call: escaped, the number only where there is one.
    var described: String {
        TerminalText.field(shortID) + (call.number.isEmpty ? "" : " (" + TerminalText.field(call.number) + ")")
    }
}
