/// Why runs cannot be kept; operating-system failures are `SystemError`s.
public enum RunError: Error, Equatable, CustomStringConvertible {
    /// Another live telwatch holds this state directory: two would report each other's runs as stale.
    case stateDirectoryInUse(String)

    public var description: String {
        switch self {
        case .stateDirectoryInUse(let directory):
            return "another telwatch is using the state directory \(directory)"
        }
    }
}
