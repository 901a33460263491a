/// The answer to a method call whose work waits on something else (another service's reply):
/// the handler keeps it and answers later, on the loop's thread, exactly once, as sd-bus's
/// `sd_bus_message_ref` of a call and GDBus's `GDBusMethodInvocation` do. The loop never waits
/// for it. An answer that never comes is given for the handler, as an error, when the last
/// reference to it goes: no caller waits out its own timeout for a reply that was dropped.
public final class MethodReply {
    private let call: Message
    private weak var connection: Connection?
    private let outSignature: String
    public private(set) var isAnswered = false

    init(call: Message, connection: Connection, outSignature: String) {
        self.call = call
        self.connection = connection
        self.outSignature = outSignature
    }

    /// The unique bus name of the caller.
    public var sender: String? { call.sender }

    /// Replies with `values`, which must match the method's declared out signature (else the
    /// caller gets `Failed`, naming the mismatch).
    public func send(_ values: [DBusValue]) {
        guard answer() else { return }
        let produced = values.map(\.signatureString).joined()
        guard produced == outSignature else {
            connection?.replyError(to: call, name: "org.freedesktop.DBus.Error.Failed",
                                   "\(call.member ?? "") produced '\(produced)', declared '\(outSignature)'")
            return
        }
        connection?.reply(to: call, values)
    }

    /// Replies with the error `name` and its message.
    public func fail(name: String, message: String) {
        guard answer() else { return }
        connection?.replyError(to: call, name: name, message)
    }

    /// Marks it answered; false when it already was. A handler that threw before answering is
    /// answered by the exported object with that error.
    func answer() -> Bool {
        guard !isAnswered else { return false }
        isAnswered = true
        return true
    }

    deinit {
        if !isAnswered {
            connection?.replyError(to: call, name: "org.freedesktop.DBus.Error.Failed",
                                   "\(call.member ?? "the method") was dropped unanswered")
        }
    }
}
