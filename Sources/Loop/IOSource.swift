import CLoop
import Glibc

public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: EPOLLIN.rawValue)
    public static let writable = IOEvents(rawValue: EPOLLOUT.rawValue)
    public static let error = IOEvents(rawValue: EPOLLERR.rawValue)
    public static let hangup = IOEvents(rawValue: EPOLLHUP.rawValue)
}

/// A file descriptor in the loop's epoll set.
public final class IOSource {
    private weak var loop: EventLoop?
    let fd: Int32
    let token: UInt64
    let handler: (IOEvents) -> Void
    public private(set) var events: IOEvents

    init(loop: EventLoop, fd: Int32, token: UInt64, events: IOEvents, handler: @escaping (IOEvents) -> Void) {
        self.loop = loop
        self.fd = fd
        self.token = token
        self.events = events
        self.handler = handler
    }

    public func setEvents(_ newEvents: IOEvents) {
        guard newEvents != events else { return }
        events = newEvents
        loop?.modify(self, events: newEvents)
    }

    /// Removes the descriptor from the loop; safe to call twice.
    public func cancel() {
        loop?.remove(self)
        loop = nil
    }

    func detach() { loop = nil }
}
