/// A field of a run or sleep event, typed as its output needs it: JSON writes seconds as numbers,
/// times as RFC 3339 strings, counts as integers and flags as booleans, and never has to guess a
/// type back from text.
import Processes

public enum FieldValue: Equatable, Sendable, CustomStringConvertible {
    case text(String?)
    /// A duration in seconds.
    case seconds(Double?)
    /// A wall-clock moment (seconds since the epoch).
    case time(Double?)
    case count(Int)
    case flag(Bool)

    /// The value as a word: what hooks, records and `key=value` lines carry ("" for none).
    public var description: String {
        switch self {
        case .text(let text): return text ?? ""
        case .seconds(let seconds), .time(let seconds): return seconds.map(formatSeconds) ?? ""
        case .count(let count): return String(count)
        case .flag(let flag): return flag ? "true" : "false"
        }
    }
}

/// An event that describes itself as a name, a time and typed fields (run and sleep events).
public protocol FieldedEvent {
    /// A stable kebab-case name for output.
    var name: String { get }
    /// Wall-clock seconds.
    var time: Double { get }
    /// The event's data, in order: the keys of its JSON line after `event` and `time`.
    var fields: [(key: StaticString, value: FieldValue)] { get }
}

/// The state of a run's inhibitor lock, as events, the run record and hooks (`TELWATCH_LOCK`) say it.
public enum LockState: String, Equatable, Sendable {
    /// The run holds no lock: none is configured.
    case off
    /// Asked for; logind has not answered yet.
    case pending
    case held
    /// Wanted, but nothing is inhibited (no logind, a refusal, a lost bus).
    case unavailable
    /// Given back: the run ended.
    case released
}

/// Why a run ended.
public enum RunEndReason: String, Equatable, Sendable {
    /// The last holder left.
    case idle
    /// Its lease ran out.
    case expired
    /// telwatch is stopping.
    case shutdown
    /// A telwatch that died left it open; the next start closed it.
    case stale
}
