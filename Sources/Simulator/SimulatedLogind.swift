import DBus
import Glibc
import Loop

/// Just enough of systemd-logind for the demo's private bus: `Manager.Inhibit` hands out a real
/// descriptor (the read end of a pipe) and the lock lasts until every copy of it is closed, which
/// is how logind itself behaves; `ListInhibitors` shows the locks still held.
public final class SimulatedLogind {
    public static let busName = "org.freedesktop.login1"
    public static let path: ObjectPath = "/org/freedesktop/login1"
    public static let interface = "org.freedesktop.login1.Manager"

    private struct Lock {
        let what: String, who: String, why: String, mode: String
        let writeEnd: Int32
        let source: IOSource
    }

    private let connection: Connection
    private var locks: [Lock] = []

    public init(connection: Connection) throws {
        self.connection = connection
        let manager = try ExportedInterface(SimulatedLogind.interface)
        try manager.addMethod("Inhibit", in: "ssss", out: "h") { [unowned self] call in
            let (what, who, why, mode) = try call.decode(String.self, String.self, String.self, String.self)
            return [.unixFD(try self.inhibit(what: what, who: who, why: why, mode: mode))]
        }
        try manager.addMethod("ListInhibitors", out: "a(ssssuu)") { [unowned self] _ in
            let entries = self.locks.map { lock in
                DBusValue.structure([.string(lock.what), .string(lock.who), .string(lock.why), .string(lock.mode),
                                     .uint32(getuid()), .uint32(UInt32(getpid()))])
            }
            return [.array(elementSignature: "(ssssuu)", entries)]
        }
        try manager.addSignal("PrepareForSleep", signature: "b")
        connection.export(ExportedObject(path: SimulatedLogind.path, interfaces: [manager]))
        _ = try connection.requestName(SimulatedLogind.busName)
    }

    public var heldLocks: Int { locks.count }

    private func inhibit(what: String, who: String, why: String, mode: String) throws -> UnixFD {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SystemError.last("pipe") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let writeEnd = fds[1]
        // With every read end closed, the write end reports an error: the lock is released.
        let source = try connection.loop.watch(fd: writeEnd, events: []) { [unowned self] _ in
            self.release(writeEnd)
        }
        locks.append(Lock(what: what, who: who, why: why, mode: mode, writeEnd: writeEnd, source: source))
        return UnixFD(taking: fds[0])
    }

    private func release(_ writeEnd: Int32) {
        guard let index = locks.firstIndex(where: { $0.writeEnd == writeEnd }) else { return }
        locks[index].source.cancel()
        close(writeEnd)
        locks.remove(at: index)
    }
}
