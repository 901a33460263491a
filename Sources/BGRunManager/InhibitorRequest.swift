import Glibc

/// What a logind inhibitor lock blocks, and how (docs/modem-stacks.md §4.1).
public struct InhibitorRequest: Equatable, Sendable {
    /// Colon-separated: `sleep`, `idle`, `shutdown`, `handle-lid-switch`, … e.g. `sleep:idle`.
    public var what: String
    public var who: String
    public var why: String
    /// `block`, or `delay` (logind waits only a few seconds for the holder).
    public var mode: String

    public init(what: String = "sleep", who: String = "telwatch", why: String = "telwatch background run",
                mode: String = "block") {
        self.what = what
        self.who = who
        self.why = why
        self.mode = mode
    }
}
