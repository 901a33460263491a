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
