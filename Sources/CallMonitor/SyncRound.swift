import DBus

/// One pass over a service's modems and calls: counts the requests still out, remembers what
/// was listed, and knows which previously known calls were not seen again.
final class SyncRound {
    private(set) var outstanding = 0
    var modems = 0
    var calls = 0
    /// Calls known before the round that neither a listing nor a new signal has vouched for.
    var unconfirmed: Set<String>
    private(set) var failure: String?
    private(set) var refusal: String?
    /// The resync after a resume: what it finds is `learnedOnResume`.
    let resumed: Bool

    init(knownCalls: some Sequence<String>, resumed: Bool = false) {
        unconfirmed = Set(knownCalls)
        self.resumed = resumed
    }

    func begin() { outstanding += 1 }

    /// Returns true when this was the last request out.
    func end() -> Bool {
        outstanding -= 1
        return outstanding == 0
    }

    /// A listing named these calls.
    func found(_ paths: [String]) {
        calls += paths.count
        unconfirmed.subtract(paths)
    }

    func fail(_ why: String) {
        if failure == nil { failure = why }
    }

    /// A listing's error: a refusal when the service's policy may refuse and did (AccessDenied,
    /// docs/modem-stacks.md §3.4), else a failure.
    func failed(_ what: String, _ error: DBusError, policyMayRefuse: Bool) {
        guard policyMayRefuse, error.name == accessDeniedError else { return fail("\(what): \(error)") }
        if case .remote(_, let text) = error { refusal = "\(what): \(CallText.clip(text, 200))" }
    }
}

/// The error name the bus uses when its policy refuses a call (oFono's at_console rule).
let accessDeniedError = "org.freedesktop.DBus.Error.AccessDenied"
