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
