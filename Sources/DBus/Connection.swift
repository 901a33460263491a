import CDBus
import Glibc
import Loop

/// A private connection to a message bus, driven by an `EventLoop`.
/// Everything happens on the loop's thread: handlers run there, in the order messages arrive.
public final class Connection {
    let raw: OpaquePointer
    public let loop: EventLoop
    public let uniqueName: String
    public let bus: BusAddress
    public private(set) var isConnected = true

    /// Called once when the bus goes away (the daemon stopped, the socket closed).
    public var onDisconnect: (() -> Void)?
    /// Handlers for the answers to calls that timed out here, by the calls' serials.
    private var lateReplies: [UInt32: (Message) -> Void] = [:]
    /// Failures that have no caller to throw to, such as a refused AddMatch. By default a line
    /// on stderr in the Unix way, under the program's own name.
    public var onWarning: (String) -> Void = { message in
        let program = CommandLine.arguments.first.flatMap { $0.split(separator: "/").last }.map(String.init) ?? "dbus"
        var line = program + ": dbus: " + message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }

    private var watches: [OpaquePointer] = []
    private var watchSources: [Int32: IOSource] = [:]
    private var timeouts: [OpaquePointer: Double] = [:]
    private var subscriptions: [ObjectIdentifier: Subscription] = [:]
    private var subscriptionOrder: [Subscription] = []
    var exportedObjects: [String: ExportedObject] = [:]
    var exportedSubtrees: [String: ObjectSubtree] = [:]
    private var isClosed = false

    /// Counts messages dispatched to handlers (for benchmarks).
    public private(set) var dispatchedMessages: UInt64 = 0

    public init(_ bus: BusAddress, loop: EventLoop) throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        var connection: OpaquePointer?
        switch bus {
        case .system: connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let address):
            connection = dbus_connection_open_private(address, &error)
            if let opened = connection, dbus_bus_register(opened, &error) == 0 {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                connection = nil
            }
        }
        guard let connection else {
            let failure = DBusError.take(&error)
            if case .remote(let name, let message) = failure {
                throw DBusError.connectionFailed("\(bus): \(message.isEmpty ? name : message)")
            }
            throw DBusError.connectionFailed("\(bus): \(failure)")
        }
        raw = connection
        self.bus = bus
        self.loop = loop
        uniqueName = dbus_bus_get_unique_name(connection).map { String(cString: $0) } ?? ""
        dbus_connection_set_exit_on_disconnect(connection, 0)

        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            connection, connectionAddWatch, connectionRemoveWatch, connectionToggleWatch, context, nil)
        dbus_connection_set_timeout_functions(
            connection, connectionAddTimeout, connectionRemoveTimeout, connectionToggleTimeout, context, nil)
        dbus_connection_add_filter(connection, connectionFilter, context, nil)
        loop.addHook(loopDriver)
    }

    deinit { close() }

    /// Flushes what is queued and closes the connection; handlers stop, pending calls fail.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_remove_filter(raw, connectionFilter, context)
        if isConnected { dbus_connection_flush(raw) }
        dbus_connection_close(raw)
        dbus_connection_set_watch_functions(raw, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(raw, nil, nil, nil, nil, nil)
        for source in watchSources.values { source.cancel() }
        watchSources.removeAll()
        watches.removeAll()
        timeouts.removeAll()
        lateReplies.removeAll()
        subscriptions.removeAll()
        subscriptionOrder.removeAll()
        loop.removeHook(loopDriver)
        isConnected = false
        dbus_connection_unref(raw)
    }

    // MARK: Sending

    /// Queues a message; returns its serial.
    @discardableResult
    public func send(_ message: Message) throws -> UInt32 {
        guard isConnected else { throw DBusError.disconnected }
        var serial: UInt32 = 0
        let outgoing = message.sendable()
        let sent = withExtendedLifetime(outgoing) { dbus_connection_send(raw, outgoing.raw, &serial) }
        guard sent != 0 else { throw DBusError.disconnected }
        return serial
    }

    /// Emits a signal with typed arguments.
    public func emit<each T: DBusType>(
        path: ObjectPath, interface: String, member: String, _ arguments: repeat each T
    ) throws {
        let message = try Message.signal(path: path, interface: interface, member: member)
        try message.append(repeat each arguments)
        try send(message)
    }

    /// Calls a method without blocking the loop; `reply` runs on the loop thread exactly once,
    /// with the reply, the error reply as a `DBusError`, or `.timedOut`.
    @discardableResult
    public func call(
        _ message: Message, timeout: Double = 25, reply: @escaping (Result<Message, DBusError>) -> Void
    ) -> PendingCall? {
        var pending: OpaquePointer?
        let outgoing = message.sendable()
        guard isConnected,
              withExtendedLifetime(outgoing, {
                  dbus_connection_send_with_reply(raw, outgoing.raw, &pending, Connection.milliseconds(timeout))
              }) != 0,
              let pending
        else {
            loop.soon { reply(.failure(.disconnected)) }
            return nil
        }
        let box = Unmanaged.passRetained(ReplyBox(reply)).toOpaque()
        dbus_pending_call_set_notify(pending, pendingCallNotify, box, replyBoxFree)
        return PendingCall(adopting: pending, serial: outgoing.serial)
    }

    /// A call whose reply handler saw `.timedOut` is still counted against this connection by the
    /// bus until its callee answers or leaves the bus (docs/modem-stacks.md §8). `handler` gets
    /// that late answer (a reply or an error reply), once; `forgetLateReply` gives up on it.
    public func awaitLateReply(toSerial serial: UInt32, _ handler: @escaping (Message) -> Void) {
        lateReplies[serial] = handler
    }

    public func forgetLateReply(to serial: UInt32) {
        lateReplies.removeValue(forKey: serial)
    }

    /// Calls a method and waits for the answer, reading (and later dispatching) whatever else arrives.
    /// For one-shot commands and start-up; a handler on the loop should use `call(_:timeout:reply:)`.
    public func callBlocking(_ message: Message, timeout: Double = 25) throws -> Message {
        guard isConnected else { throw DBusError.disconnected }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let outgoing = message.sendable()
        let reply = withExtendedLifetime(outgoing) {
            dbus_connection_send_with_reply_and_block(raw, outgoing.raw, Connection.milliseconds(timeout), &error)
        }
        guard let reply else { throw DBusError.take(&error) }
        return Message(adopting: reply)
    }

    /// Builds and calls a method with typed arguments, blocking.
    public func callBlocking<each T: DBusType>(
        destination: String, path: ObjectPath, interface: String, member: String,
        _ arguments: repeat each T, timeout: Double = 25
    ) throws -> Message {
        let message = try Message.methodCall(destination: destination, path: path, interface: interface, member: member)
        try message.append(repeat each arguments)
        return try callBlocking(message, timeout: timeout)
    }

    static func milliseconds(_ seconds: Double) -> Int32 {
        guard seconds.isFinite else { return Int32.max }
        return Int32(max(1, min(seconds * 1000, Double(Int32.max))))
    }

    // MARK: Names

    public enum RequestNameResult: Sendable { case primaryOwner, inQueue, exists, alreadyOwner }

    /// Asks the bus for a well-known name (blocking: used at start-up).
    @discardableResult
    public func requestName(_ name: String, allowReplacement: Bool = false, replaceExisting: Bool = false,
                            queue: Bool = false) throws -> RequestNameResult {
        try DBusName.check(busName: name)
        var flags: UInt32 = 0
        if allowReplacement { flags |= UInt32(DBUS_NAME_FLAG_ALLOW_REPLACEMENT) }
        if replaceExisting { flags |= UInt32(DBUS_NAME_FLAG_REPLACE_EXISTING) }
        if !queue { flags |= UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE) }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let result = dbus_bus_request_name(raw, name, flags, &error)
        if result < 0 { throw DBusError.take(&error) }
        switch result {
        case DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER: return .primaryOwner
        case DBUS_REQUEST_NAME_REPLY_IN_QUEUE: return .inQueue
        case DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER: return .alreadyOwner
        default: return .exists
        }
    }

    public func releaseName(_ name: String) throws {
        try DBusName.check(busName: name)
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        if dbus_bus_release_name(raw, name, &error) < 0 { throw DBusError.take(&error) }
    }

    /// Follows the owner of a well-known name; `handler` runs on every change.
    public func watchName(_ name: String, _ handler: @escaping (NameOwnerEvent) -> Void) throws -> NameOwnerWatch {
        try NameOwnerWatch(connection: self, name: name, handler: handler)
    }

    // MARK: Signals

    /// Adds the rule on the bus and routes matching messages to `handler`.
    /// With `owner`, a message whose sender is not the name's current owner goes to `onRejected` instead.
    @discardableResult
    public func subscribe(
        _ rule: MatchRule, owner: NameOwnerWatch? = nil, onRejected: ((Message) -> Void)? = nil,
        _ handler: @escaping (Message) -> Void
    ) -> Subscription {
        let subscription = Subscription(connection: self, rule: rule, owner: owner, onRejected: onRejected,
                                        handler: handler)
        subscriptions[ObjectIdentifier(subscription)] = subscription
        subscriptionOrder.append(subscription)
        busMatch("AddMatch", rule)
        return subscription
    }

    func unsubscribe(_ subscription: Subscription) {
        guard subscriptions.removeValue(forKey: ObjectIdentifier(subscription)) != nil else { return }
        subscriptionOrder.removeAll { $0 === subscription }
        busMatch("RemoveMatch", subscription.rule)
    }

    private func busMatch(_ member: String, _ rule: MatchRule) {
        guard isConnected else { return }
        let message: Message
        do {
            message = try Message.methodCall(
                destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface, member: member)
            try message.append(rule.description)
        } catch {
            // Not sent: the rule's signals would never come (or never stop).
            return onWarning("\(member) \(rule) was not sent: \(error)")
        }
        call(message) { [weak self] result in
            if case .failure(let error) = result, error != .disconnected {
                self?.onWarning("\(member) \(rule) failed: \(error)")
            }
        }
    }

    // MARK: Dispatch

    fileprivate func route(_ messagePointer: OpaquePointer) -> DBusHandlerResult {
        let message = Message(retaining: messagePointer)
        switch message.type {
        case .signal:
            if message.headerField(.interface, equals: "org.freedesktop.DBus.Local"),
               message.headerField(.member, equals: "Disconnected") {
                lost()
                return DBUS_HANDLER_RESULT_HANDLED
            }
            dispatchedMessages &+= 1
            // Handlers may subscribe or unsubscribe: walk a snapshot, skip the removed.
            let header = MessageHeader(message)
            for subscription in subscriptionOrder
            where subscription.isActive && subscription.matcher.matches(message, header) {
                subscription.deliver(message)
            }
            // Handled: libdbus need not look for an object-path handler for a signal.
            return DBUS_HANDLER_RESULT_HANDLED
        case .methodCall:
            return handleMethodCall(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case .methodReturn, .error:
            // A reply that reaches the filters has no pending call any more: it came after its
            // call timed out here (or was cancelled).
            guard let handler = lateReplies.removeValue(forKey: message.replySerial) else {
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            }
            handler(message)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }

    private func lost() {
        guard isConnected else { return }
        isConnected = false
        for source in watchSources.values { source.cancel() }
        watchSources.removeAll()
        onDisconnect?()
    }

    // MARK: Loop integration

    /// Folds the connection into the loop's turns without making that a public face of `Connection`.
    private final class LoopDriver: LoopHook {
        unowned let connection: Connection
        init(_ connection: Connection) { self.connection = connection }
        var phase: TurnPhase { .dispatch }
        func prepare() -> Double? { connection.prepare() }
        func afterWait(now: Double) { connection.afterWait(now: now) }
    }

    private lazy var loopDriver = LoopDriver(self)

    private func prepare() -> Double? {
        guard !isClosed else { return nil }
        while dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
        var next: Double?
        for deadline in timeouts.values { next = min(next ?? deadline, deadline) }
        return next
    }

    private func afterWait(now: Double) {
        guard !isClosed else { return }
        for (timeout, deadline) in timeouts where deadline <= now {
            guard timeouts[timeout] != nil else { continue }
            timeouts[timeout] = now + Double(dbus_timeout_get_interval(timeout)) / 1000
            dbus_timeout_handle(timeout)
        }
    }

    fileprivate func addWatch(_ watch: OpaquePointer) {
        watches.append(watch)
        updateWatches(fd: dbus_watch_get_unix_fd(watch))
    }

    fileprivate func removeWatch(_ watch: OpaquePointer) {
        watches.removeAll { $0 == watch }
        updateWatches(fd: dbus_watch_get_unix_fd(watch))
    }

    fileprivate func toggleWatch(_ watch: OpaquePointer) {
        updateWatches(fd: dbus_watch_get_unix_fd(watch))
    }

    /// libdbus keeps separate read and write watches on one fd; epoll takes the fd once,
    /// so the wanted events are merged. Writing is asked for only while output is queued.
    private func updateWatches(fd: Int32) {
        guard fd >= 0 else { return }
        var events: IOEvents = []
        for watch in watches where dbus_watch_get_unix_fd(watch) == fd && dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { events.insert(.readable) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events.insert(.writable) }
        }
        if events.isEmpty {
            watchSources.removeValue(forKey: fd)?.cancel()
        } else if let source = watchSources[fd] {
            source.setEvents(events)
        } else if isConnected, !isClosed {
            do {
                watchSources[fd] = try loop.watch(fd: fd, events: events) { [unowned self] ready in
                    self.handleIO(fd: fd, ready: ready)
                }
            } catch {
                onWarning("cannot watch the bus socket (\(error)): messages on it will not be read")
            }
        }
    }

    private func handleIO(fd: Int32, ready: IOEvents) {
        for watch in watches where dbus_watch_get_unix_fd(watch) == fd {
            // Handling one watch can remove another (on disconnect).
            guard watches.contains(watch), dbus_watch_get_enabled(watch) != 0 else { continue }
            let wanted = dbus_watch_get_flags(watch)
            var flags: UInt32 = 0
            if ready.contains(.readable) && wanted & DBUS_WATCH_READABLE.rawValue != 0 {
                flags |= DBUS_WATCH_READABLE.rawValue
            }
            if ready.contains(.writable) && wanted & DBUS_WATCH_WRITABLE.rawValue != 0 {
                flags |= DBUS_WATCH_WRITABLE.rawValue
            }
            if ready.contains(.error) { flags |= DBUS_WATCH_ERROR.rawValue }
            if ready.contains(.hangup) { flags |= DBUS_WATCH_HANGUP.rawValue }
            if flags != 0 { dbus_watch_handle(watch, flags) }
        }
    }

    fileprivate func addTimeout(_ timeout: OpaquePointer) { toggleTimeout(timeout) }

    fileprivate func removeTimeout(_ timeout: OpaquePointer) { timeouts.removeValue(forKey: timeout) }

    fileprivate func toggleTimeout(_ timeout: OpaquePointer) {
        if dbus_timeout_get_enabled(timeout) != 0 {
            timeouts[timeout] = monotonicNow() + Double(dbus_timeout_get_interval(timeout)) / 1000
        } else {
            timeouts.removeValue(forKey: timeout)
        }
    }
}

private final class ReplyBox {
    let handler: (Result<Message, DBusError>) -> Void
    init(_ handler: @escaping (Result<Message, DBusError>) -> Void) { self.handler = handler }
}

// MARK: libdbus callbacks (no captures: the connection travels as the context pointer)

private func connection(_ context: UnsafeMutableRawPointer?) -> Connection {
    Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue()
}

private let connectionAddWatch: DBusAddWatchFunction = { watch, context in
    if let watch { connection(context).addWatch(watch) }
    return 1
}
private let connectionRemoveWatch: DBusRemoveWatchFunction = { watch, context in
    if let watch { connection(context).removeWatch(watch) }
}
private let connectionToggleWatch: DBusWatchToggledFunction = { watch, context in
    if let watch { connection(context).toggleWatch(watch) }
}
private let connectionAddTimeout: DBusAddTimeoutFunction = { timeout, context in
    if let timeout { connection(context).addTimeout(timeout) }
    return 1
}
private let connectionRemoveTimeout: DBusRemoveTimeoutFunction = { timeout, context in
    if let timeout { connection(context).removeTimeout(timeout) }
}
private let connectionToggleTimeout: DBusTimeoutToggledFunction = { timeout, context in
    if let timeout { connection(context).toggleTimeout(timeout) }
}
private let connectionFilter: DBusHandleMessageFunction = { _, message, context in
    guard let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return connection(context).route(message)
}
private let pendingCallNotify: DBusPendingCallNotifyFunction = { pending, context in
    let box = Unmanaged<ReplyBox>.fromOpaque(context!).takeUnretainedValue()
    guard let pending, let raw = dbus_pending_call_steal_reply(pending) else {
        box.handler(.failure(.disconnected))
        return
    }
    let reply = Message(adopting: raw)
    if let error = reply.asError { box.handler(.failure(error)) } else { box.handler(.success(reply)) }
}
private let replyBoxFree: DBusFreeFunction = { context in
    Unmanaged<ReplyBox>.fromOpaque(context!).release()
}
