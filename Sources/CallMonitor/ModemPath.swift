/// The modem a call is on, as far as its stack has said: a call first seen through its own signal
/// is on a modem that no listing or `CallAdded` has named yet. Events and snapshots carry the
/// modem as its object path, "" while it is unknown (docs/dbus-api.md: `modem`).
enum ModemPath: Hashable {
    case unknown
    case path(String)

    /// A modem as events and snapshots carry it: "" is unknown.
    init(_ path: String) {
        self = path.isEmpty ? .unknown : .path(path)
    }

    /// As events and snapshots carry it.
    var eventValue: String {
        switch self {
        case .unknown: return ""
        case .path(let path): return path
        }
    }

    var isKnown: Bool { self != .unknown }
}
