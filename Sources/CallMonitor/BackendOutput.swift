import DBus

/// What a backend tells the monitor, stamped with its stack: calls as `BackendEvent`s, all the
/// user should hear as `BackendNotice`s.
struct BackendOutput {
    let kind: BackendKind
    private let onEvent: (BackendEvent) -> Void
    private let onNotice: (BackendNotice) -> Void

    init(kind: BackendKind, onEvent: @escaping (BackendEvent) -> Void,
         onNotice: @escaping (BackendNotice) -> Void) {
        self.kind = kind
        self.onEvent = onEvent
        self.onNotice = onNotice
    }

    func key(_ path: String) -> CallKey { CallKey(backend: kind, path: path) }

    /// `learnedOnResume` when the resync after a resume found it.
    func emit(_ event: BackendEvent, resumed: Bool = false) {
        onEvent(resumed ? .learnedOnResume(event) : event)
    }

    func notice(_ notice: BackendNotice) { onNotice(notice) }

    /// A message from the owner that cannot be used: one notice naming it, never its contents.
    func malformed(_ message: Message) {
        onNotice(.malformed(kind, "\(message.member ?? "?") on \(CallText.clip(message.path ?? "?")) "
                                + "with signature '\(CallText.clip(message.signature))'"))
    }

    /// Parts of a call's properties that were left out (wrong type, unknown value, too long).
    func report(_ problems: [String], on path: String, object: String = "call") {
        for problem in problems { onNotice(.malformed(kind, "\(object) \(CallText.clip(path)): \(problem)")) }
    }
}
