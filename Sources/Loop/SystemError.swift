import Glibc

/// A failed operating-system call: what was called, and the errno it left.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public var call: String
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The failure of a call that just set errno.
    public static func last(_ call: String) -> SystemError { SystemError(call: call, errno: Glibc.errno) }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}
