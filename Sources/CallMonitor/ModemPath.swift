/// The modem a call is on, as far as its stack has said: a call first seen through its own signal
/// is on a modem that no listing or `CallAdded` has named yet. Typed up to the edges that print it,
/// where it is its object path, "" while it is unknown (docs/dbus-api.md: `modem`).
public enum ModemPath: Hashable, Sendable {
    case unknown
    case path(String)

    /// A modem as the edges carry it: "" is unknown.
    public init(_ path: String) {
        self = path.isEmpty ? .unknown : .path(path)
    }

    /// As the edges carry it (an event's `modem`, the history's column, a hook's TELWATCH_MODEM).
    public var eventValue: String {
        switch self {
        case .unknown: return ""
        case .path(let path): return path
        }
    }

    public var isKnown: Bool { self != .unknown }
}

/// A modem written out, as tests and scripted calls name it: `""` is unknown.
extension ModemPath: ExpressibleByStringLiteral {
    public init(stringLiteral path: String) {
        self.init(path)
    }
}
