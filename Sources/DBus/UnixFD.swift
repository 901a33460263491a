import CDBus
import Glibc

/// An owned file descriptor received from or sent over D-Bus. It is closed exactly once:
/// by `close()`, or when the last reference goes away.
public final class UnixFD: CustomStringConvertible {
    public private(set) var rawValue: Int32

    /// Takes ownership of `fd`.
    public init(taking fd: Int32) { rawValue = fd }

    public var isOpen: Bool { rawValue >= 0 }

    public func close() {
        guard rawValue >= 0 else { return }
        _ = Glibc.close(rawValue)
        rawValue = -1
    }

    /// Gives up ownership: the caller closes the returned descriptor.
    public func release() -> Int32 {
        defer { rawValue = -1 }
        return rawValue
    }

    public var description: String { "fd \(rawValue)" }

    deinit { close() }
}
