/// A ModemManager state or reason as it came off the bus. A number the daemon does not define
/// stays that number, to be reported as it is rather than trapped on or guessed at.
public struct ModemManagerValue<Known: RawRepresentable>: Hashable, Sendable where Known.RawValue == Int32 {
    public let raw: Int32

    public init(raw: Int32) {
        self.raw = raw
    }

    public init(_ known: Known) {
        raw = known.rawValue
    }

    /// nil for a number the daemon does not define.
    public var known: Known? { Known(rawValue: raw) }
}
