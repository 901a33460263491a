import CDBus
import Glibc
import Loop

/// A method call awaiting its reply.
public final class PendingCall {
    private let raw: OpaquePointer
    /// The call's serial: a late reply names it as its `replySerial`.
    public let serial: UInt32

    init(adopting raw: OpaquePointer, serial: UInt32) {
        self.raw = raw
        self.serial = serial
    }

    /// Drops the call: its reply handler will not run.
    public func cancel() { dbus_pending_call_cancel(raw) }

    deinit { dbus_pending_call_unref(raw) }
}
