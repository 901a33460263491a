import DBus
import Glibc
import Loop

/// An Android-style kernel wakelock (`/sys/power/wake_lock`, `wake_unlock`), which some phone
/// kernels honour where logind's inhibitor alone does not keep the device up. Unlike the
/// inhibitor it is not tied to a descriptor: a killed telwatch leaves it held, so the name is
/// recorded with the run and released by crash recovery.
public struct KernelWakelock: Equatable, Sendable {
    public var name: String
    /// `/sys/power` on a real system; a test points it at a directory of plain files.
    public var directory: String

    public init(name: String, directory: String = "/sys/power") {
        self.name = name
        self.directory = directory
    }

    /// Whether this kernel has wakelocks at all.
    public var isAvailable: Bool { access(directory + "/wake_lock", W_OK) == 0 }

    public func acquire() throws { try write(to: "wake_lock") }

    public func release() throws { try write(to: "wake_unlock") }

    private func write(to file: String) throws {
        let path = directory + "/" + file
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError.last("open \(path)") }
        defer { close(fd) }
        let bytes = Array(name.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw SystemError.last("write \(path)") }
    }
}
