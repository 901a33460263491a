import Glibc

/// The service manager's notification socket (sd_notify(3)'s datagram protocol, spoken directly):
/// `NOTIFY_SOCKET` names an AF_UNIX datagram socket (a path, or `@name` for the abstract
/// namespace), and each state change is one datagram of `KEY=value` lines (`READY=1`,
/// `STATUS=…`, `STOPPING=1`, `WATCHDOG=1`). Spoken here rather than through libsystemd so the one
/// binary runs unchanged where there is no systemd (postmarketOS and Alpine run OpenRC): without
/// `NOTIFY_SOCKET` this type is never made, and nothing of systemd is linked or loaded.
public final class ServiceNotifier {
    private let fd: Int32
    private var address = sockaddr_un()
    private let addressLength: socklen_t

    /// The notifier for `NOTIFY_SOCKET`, or nil when telwatch was not started by a service
    /// manager that listens (no variable, or a name that cannot be a socket address). The variable
    /// is removed from the environment, so hooks and commands cannot speak for telwatch.
    public static func fromEnvironment() -> ServiceNotifier? {
        guard let raw = getenv("NOTIFY_SOCKET") else { return nil }
        let name = String(cString: raw)
        unsetenv("NOTIFY_SOCKET")
        return ServiceNotifier(socketName: name)
    }

    /// nil when `socketName` is neither an absolute path nor `@abstract`, is too long, or no socket
    /// can be made.
    public init?(socketName: String) {
        var bytes = Array(socketName.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "@") else { return nil }
        // An abstract name starts with a NUL byte and is as long as the address length says.
        if first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        // A path includes its terminating NUL; an abstract name does not.
        addressLength = socklen_t(pathOffset + bytes.count + (first == UInt8(ascii: "@") ? 0 : 1))
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
    }

    deinit { close(fd) }

    /// Sends one datagram of `KEY=value` lines. Never blocks the loop: a manager that does not
    /// read (a full queue) loses this message rather than stalling telwatch; returns whether it
    /// was sent.
    @discardableResult
    public func send(_ assignments: [String]) -> Bool {
        var text = assignments.joined(separator: "\n")
        return text.withUTF8 { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), socketAddress,
                           addressLength) == bytes.count
                }
            }
        }
    }

    /// The watchdog interval the manager expects pings within (`WATCHDOG_USEC`, for this process
    /// when `WATCHDOG_PID` names one), in seconds; nil when no watchdog is set.
    public static func watchdogInterval() -> Double? {
        if let pid = getenv("WATCHDOG_PID").flatMap({ Int32(String(cString: $0)) }), pid != getpid() { return nil }
        guard let usec = getenv("WATCHDOG_USEC").flatMap({ UInt64(String(cString: $0)) }), usec > 0 else { return nil }
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
        return Double(usec) / 1_000_000
    }
}
