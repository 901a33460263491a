@testable import CallMonitor

/// Tracker events in a compact form a test can compare: `id-1 new->incoming.ringing`,
/// `id-1 connected->disconnected(terminated)`, `busy id-2`; an event of a call the tracker learned
/// of on a resume ends in ` resumed` (`id-1 missed resumed`).
func describe(_ events: [TrackerEvent]) -> [String] {
    events.map { event in
        let flag = event.call?.resumed == true ? " resumed" : ""
        switch event {
        case let .transition(s, previous):
            let from = previous?.rawValue ?? "new"
            let to = s.detail.map { "\(s.state.rawValue).\($0.rawValue)" }
                ?? "\(s.state.rawValue)(\(s.reason?.word ?? "-"))"
            return "\(s.id) \(from)->\(to)\(flag)"
        case let .updated(s): return "\(s.id) updated\(flag)"
        case let .missed(s): return "\(s.id) missed\(flag)"
        case let .busy(s): return "busy \(s.id)\(flag)"
        case let .idle(s): return "idle \(s.id)\(flag)"
        case let .announced(key, id): return "\(id) announced \(key.path)"
        case let .withdrawn(key, id): return "\(id) withdrawn \(key.path)"
        }
    }
}
