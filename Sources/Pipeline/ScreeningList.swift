public enum ScreeningList: String, Sendable, CaseIterable {
    case block
    case allow

    /// The other list: a number put on one is taken off this one, so the two commands toggle.
    public var opposite: ScreeningList { self == .block ? .allow : .block }
}
