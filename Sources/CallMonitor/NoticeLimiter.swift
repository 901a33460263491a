/// Caps repeated notices from one source: at most `limit` per `window` seconds for each sender
/// of rejected signals (and for each backend's malformed messages, and its unreadable calls),
/// then one summary of how many were held back. It counts on arrival and needs no timer: the summary comes with the next
/// notice after the window closes, or from `flush()`.
struct NoticeLimiter {
    struct Source: Hashable {
        enum Kind: Hashable { case rejected, malformed, unreadable }
        var backend: BackendKind
        var kind: Kind
        /// The rejected signal's sender; nil for the others.
        var sender: String?
    }

    private struct Window {
        var opened: Double
        var shown: Int
        var held: Int
    }

    let limit: Int
    let window: Double
    /// Senders tracked one by one; beyond that they share one window, so a spoofer with many
    /// connections cannot grow memory or the output.
    let maxSources: Int
    static let otherSenders = "(other senders)"
    private var windows: [Source: Window] = [:]

    init(limit: Int = 5, window: Double = 10, maxSources: Int = 16) {
        self.limit = limit
        self.window = window
        self.maxSources = maxSources
    }

    /// The notices to show now for `notice` arriving at `now` (monotonic seconds): summaries of
    /// windows that closed, then the notice itself unless its source is over the limit.
    mutating func admit(_ notice: BackendNotice, at now: Double) -> [BackendNotice] {
        let source: Source
        switch notice {
        case .rejectedSignal(let backend, let sender, _): source = Source(backend: backend, kind: .rejected, sender: sender)
        case .malformed(let backend, _): source = Source(backend: backend, kind: .malformed, sender: nil)
        case .callUnreadable(let backend, _): source = Source(backend: backend, kind: .unreadable, sender: nil)
        default: return [notice]
        }
        var out = closeWindows(at: now)
        var key = source
        // Malformed messages have one source per backend and never overflow.
        if source.sender != nil && windows[key] == nil && windows.count >= maxSources {
            key = Source(backend: source.backend, kind: .rejected, sender: Self.otherSenders)
        }
        var current = windows[key] ?? Window(opened: now, shown: 0, held: 0)
        if current.shown < limit {
            current.shown += 1
            out.append(notice)
        } else {
            current.held += 1
        }
        windows[key] = current
        return out
    }

    /// Summaries of every window still holding notices back; forgets all windows.
    mutating func flush() -> [BackendNotice] {
        closeWindows(at: .infinity)
    }

    private mutating func closeWindows(at now: Double) -> [BackendNotice] {
        var out: [BackendNotice] = []
        let closing = windows.filter { now - $0.value.opened >= window }
            .sorted { ($0.value.opened, $0.key.sender ?? "") < ($1.value.opened, $1.key.sender ?? "") }
        for (source, closed) in closing {
            windows.removeValue(forKey: source)
            guard closed.held > 0 else { continue }
            switch source.kind {
            case .rejected:
                out.append(.rejectedSuppressed(source.backend, sender: source.sender ?? "?", count: closed.held))
            case .malformed:
                out.append(.malformedSuppressed(source.backend, count: closed.held))
            case .unreadable:
                out.append(.unreadableSuppressed(source.backend, count: closed.held))
            }
        }
        return out
    }
}
