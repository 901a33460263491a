import Glibc

public enum RunError: Error, Equatable, CustomStringConvertible {
    case system(call: String, errno: Int32)
    /// Another live telwatch holds this state directory: two would report each other's runs as stale.
    case stateDirectoryInUse(String)

    public var description: String {
        switch self {
        case .system(let call, let code): return "\(call): \(String(cString: strerror(code)))"
        case .stateDirectoryInUse(let directory):
            return "another telwatch is using the state directory \(directory)"
        }
    }

    static func lastSystemError(_ call: String) -> RunError { .system(call: call, errno: errno) }
}
