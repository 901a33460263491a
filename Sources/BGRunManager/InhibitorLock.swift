import DBus
import Glibc

/// One systemd-logind inhibitor lock: `Manager.Inhibit(what, who, why, mode) -> h`.
/// The lock lives exactly as long as the returned descriptor is open, so it is held as an owned,
/// close-on-exec `UnixFD` that no child can inherit, and closing it is the release. Everything
/// is asynchronous (the loop never waits for logind). While the lock is wanted and logind's
/// owner changes (a restart), the lock is taken again from the new owner.
public final class InhibitorLock {
    public static let busName = "org.freedesktop.login1"
    public static let path: ObjectPath = "/org/freedesktop/login1"
    public static let interface = "org.freedesktop.login1.Manager"

    public enum Event: Equatable, Sendable {
        case taken
        /// Held again after it was lost while wanted (logind restarted).
        case retaken
        /// Wanted but not held: logind is absent, refused, or went away. Nothing is inhibited.
        case unavailable(String)
    }

    public let request: InhibitorRequest
    private let connection: Connection
    private let onEvent: (Event) -> Void
    private var ownerWatch: NameOwnerWatch?
    private var descriptor: UnixFD?
    private var pending: PendingCall?
    /// The `Inhibit` call, built once: libdbus rewrites the header's signature for every string
    /// appended (about 90,000 instructions for the four), a copy of the sent one costs a memcpy
    /// (`Connection.call` copies a message that already carries a serial).
    private var inhibitMessage: Message?
    /// Replies to a request sent before the last owner change or release are stale.
    private var generation: UInt64 = 0
    private var wanted = false
    private var heldInThisCycle = false

    public init(connection: Connection, request: InhibitorRequest = InhibitorRequest(),
                onEvent: @escaping (Event) -> Void) throws {
        self.connection = connection
        self.request = request
        self.onEvent = onEvent
        ownerWatch = try connection.watchName(InhibitorLock.busName) { [weak self] event in self?.ownerChanged(event) }
    }

    deinit {
        ownerWatch?.cancel()
        pending?.cancel()
    }

    public var isHeld: Bool { descriptor?.isOpen == true }

    /// The lock's descriptor while held (for diagnostics and tests; never close it).
    public var heldDescriptor: Int32? { isHeld ? descriptor?.rawValue : nil }

    /// Starts wanting the lock; `taken` or `unavailable` follows.
    public func acquire() {
        guard !wanted else { return }
        wanted = true
        heldInThisCycle = false
        send()
    }

    /// Gives the lock up (closing the descriptor) and stops wanting it.
    public func release() {
        wanted = false
        dropRequest()
        descriptor?.close()
        descriptor = nil
    }

    private func dropRequest() {
        generation &+= 1
        pending?.cancel()
        pending = nil
    }

    private func send() {
        guard wanted, descriptor == nil, pending == nil else { return }
        let message: Message
        do {
            message = try inhibitCall()
        } catch {
            unavailable("cannot ask logind: \(error)")
            return
        }
        let sent = generation
        pending = connection.call(message, timeout: 10) { [weak self] result in
            self?.answered(result, generation: sent)
        }
    }

    private func inhibitCall() throws -> Message {
        if let inhibitMessage { return inhibitMessage }
        let message = try Message.methodCall(destination: InhibitorLock.busName, path: InhibitorLock.path,
                                             interface: InhibitorLock.interface, member: "Inhibit")
        try message.append(request.what, request.who, request.why, request.mode)
        inhibitMessage = message
        return message
    }

    private func answered(_ result: Result<Message, DBusError>, generation sent: UInt64) {
        guard sent == generation else { return }  // a dropped request: its descriptor closes with the reply
        pending = nil
        guard wanted else { return }
        switch result {
        case .success(let reply):
            do {
                let fd = try reply.decode(UnixFD.self)
                // libdbus hands received descriptors out close-on-exec; the lock must never leak
                // into a hook or the run command, so it is checked rather than trusted.
                let flags = fcntl(fd.rawValue, F_GETFD)
                if flags >= 0, flags & FD_CLOEXEC == 0 { _ = fcntl(fd.rawValue, F_SETFD, flags | FD_CLOEXEC) }
                descriptor = fd
                onEvent(heldInThisCycle ? .retaken : .taken)
                heldInThisCycle = true
            } catch {
                unavailable("logind answered Inhibit with something else: \(error)")
            }
        case .failure(let error):
            unavailable("logind refused or is absent (\(error)): nothing is inhibited")
        }
    }

    private func ownerChanged(_ event: NameOwnerEvent) {
        switch event {
        case .vanished(let old):
            // The inhibitor belonged to that logind; whatever it was is gone with it.
            let hadSomething = descriptor != nil || pending != nil
            dropRequest()
            descriptor?.close()
            descriptor = nil
            if wanted && hadSomething {
                unavailable("logind (\(old)) went away: nothing is inhibited until it returns")
            }
        case .appeared:
            send()
        case .absent:
            break
        }
    }

    private func unavailable(_ why: String) {
        onEvent(.unavailable(why))
    }
}
