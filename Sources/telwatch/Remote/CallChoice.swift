import CallMonitor

/// Which live call an act means: the one named (its id, or the start of it as `status` shows
/// it), or, with none named, the one call the act is for: the call that rings (answer, hang up,
/// deflect), or the active call (tones, which only a connected call can carry).
enum CallChoice {
    /// The call an act takes when none is named.
    enum Default: Equatable {
        /// The one live call that is incoming (ringing or waiting).
        case ringing
        /// The one live call that is connected and not held.
        case active

        func fits(_ call: CallSnapshot) -> Bool {
            switch self {
            case .ringing: return call.state == .incoming
            case .active: return call.state == .connected && call.detail != .held
            }
        }

        /// "rings", "is active": what the call does, for a message.
        var doing: String { self == .ringing ? "rings" : "is active" }
        var doingMany: String { self == .ringing ? "ring" : "are active" }
    }

    enum Failure: Error, Equatable {
        /// No live call's id starts with the text given (the live calls' short ids).
        case noCall(named: String, live: [String])
        /// The text given starts several calls' ids (their whole ids).
        case several(named: String, ids: [String])
        /// None named and no call fits (the live calls' short ids and states).
        case none(Default, live: [String])
        /// None named and several fit (their short ids).
        case many(Default, ids: [String])

        var status: ExitStatus {
            switch self {
            case .noCall, .none: return .noSuchCall
            case .several, .many: return .ambiguousCall
            }
        }

        /// One line, for `command` (`answer`): what was looked for, what there is, what to do.
        func message(_ command: String) -> String {
            switch self {
            case .noCall(let named, let live):
                return "\(command): no live call has the id \(Parse.quoted(named)) (\(Self.listing(live)))"
            case .several(let named, let ids):
                return "\(command): \(Parse.quoted(named)) starts the ids of \(ids.count) live calls "
                    + "(\(ids.joined(separator: ", "))): give more of the id"
            case .none(let wanted, let live):
                return "\(command): no call \(wanted.doing) (\(Self.listing(live))); name one: telwatch \(command) CALL"
            case .many(let wanted, let ids):
                return "\(command): \(ids.count) calls \(wanted.doingMany) (\(ids.joined(separator: ", "))); "
                    + "name one: telwatch \(command) CALL"
            }
        }

        private static func listing(_ live: [String]) -> String {
            live.isEmpty ? "no call is live" : "live: " + live.joined(separator: ", ")
        }
    }

    /// The call `named` means among `calls`, or with none named the one `wanted`. An id is taken
    /// in any case, with or without its dashes (the object path's form), whole or its start.
    static func choose(_ named: String?, among calls: [RemoteCall], default wanted: Default)
        -> Result<RemoteCall, Failure> {
        guard let named else {
            let fitting = calls.filter { wanted.fits($0.call) }
            guard fitting.count == 1, let call = fitting.first else {
                return .failure(fitting.isEmpty ? .none(wanted, live: calls.map(stated))
                                                : .many(wanted, ids: fitting.map(\.shortID)))
            }
            return .success(call)
        }
        let key = compact(named)
        let fitting = key.isEmpty ? [] : calls.filter { compact($0.call.id).hasPrefix(key) }
        guard fitting.count == 1, let call = fitting.first else {
            return .failure(fitting.isEmpty ? .noCall(named: named, live: calls.map(\.shortID))
                                            : .several(named: named, ids: fitting.map(\.call.id)))
        }
        return .success(call)
    }

    /// `407e08ae incoming`.
    private static func stated(_ call: RemoteCall) -> String { call.shortID + " " + call.call.state.rawValue }

    private static func compact(_ id: String) -> String { String(id.lowercased().filter { $0 != "-" }) }
}
