/// The acts a stack has not answered yet. A backend's method calls are dropped unanswered when
/// its stack goes away or the monitor stops; whoever asked for the act still gets an answer:
/// `stackGone`.
final class ActsInFlight {
    private var next: UInt64 = 0
    private var waiting: [UInt64: (kind: BackendKind, gone: () -> Void)] = [:]

    var count: Int { waiting.count }

    /// Registers an act on `kind`'s stack; the closure returned reports its answer, once: after
    /// `stackGone` (or a first answer) it does nothing.
    func begin<Answer>(on kind: BackendKind, gone: Answer,
                       _ finish: @escaping (Answer) -> Void) -> (Answer) -> Void {
        next &+= 1
        let token = next
        waiting[token] = (kind, { finish(gone) })
        return { [weak self] answer in
            guard self?.waiting.removeValue(forKey: token) != nil else { return }
            finish(answer)
        }
    }

    /// `kind`'s stack went away (nil: every stack, the monitor stops): its acts are answered `gone`.
    func stackGone(_ kind: BackendKind?) {
        let ended = waiting.filter { kind == nil || $0.value.kind == kind }.sorted { $0.key < $1.key }
        for (token, act) in ended {
            waiting.removeValue(forKey: token)
            act.gone()
        }
    }
}
