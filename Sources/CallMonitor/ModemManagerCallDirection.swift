/// `MMCallDirection`: 0 unknown, 1 incoming, 2 outgoing (docs/modem-stacks.md §1.2).
public enum ModemManagerCallDirection: Int32, Sendable, CaseIterable {
    case unknown = 0, incoming, outgoing

    /// As the bus carries it: a value the daemon does not define says no more than `unknown`.
    public init(bus raw: Int32) {
        self = ModemManagerCallDirection(rawValue: raw) ?? .unknown
    }
}
