import DBus

/// One backend's hold on its service: the owner watch, subscriptions that only accept the
/// current owner, method calls addressed to that owner (never to whoever owns the name when the
/// call arrives, so a reply can never come from a newer instance), and the sync every owner gets.
final class ServiceLink {
    private let output: BackendOutput
    private let connection: Connection
    private let methodCalls: MethodCallQueue
    /// The service's policy may refuse a listing to this user (oFono's at_console rule,
    /// docs/modem-stacks.md §3.4): say so once and follow signals, rather than call it a failure.
    private let policyMayRefuse: Bool
    private weak var backend: LinkedBackend?
    private var watch: NameOwnerWatch?
    private var subscriptions: [Subscription] = []
    /// The sync in progress; a new owner's sync or the owner's end makes any older one moot.
    private var round: SyncRound?
    private var refusalReported = false

    init(output: BackendOutput, connection: Connection, policyMayRefuse: Bool = false) {
        self.output = output
        self.connection = connection
        self.policyMayRefuse = policyMayRefuse
        methodCalls = MethodCallQueue(connection: connection)
    }

    var kind: BackendKind { output.kind }
    var owner: String? { watch?.owner }

    /// Watches the name, as every backend follows its service: a new owner is announced and
    /// synced, a vanished owner's calls end (`backendLost`), an absent one is waited for.
    /// The backend subscribes in the same turn: our AddMatch requests then reach the bus before
    /// any sync request the owner answer triggers, so no signal falls between the listing and
    /// the subscriptions.
    func start(_ backend: LinkedBackend) throws {
        guard watch == nil else { return }
        self.backend = backend
        let kind = self.kind
        let output = self.output
        watch = try connection.watchName(kind.serviceName) { [weak self] event in
            switch event {
            case .appeared(let owner):
                output.notice(.serviceAppeared(kind, owner: owner))
                self?.sync(resumed: false)
            case .vanished:
                self?.forget()
                output.notice(.serviceVanished(kind))
                output.emit(.backendLost(kind))
            case .absent:
                output.notice(.serviceAbsent(kind))
            }
        }
        backend.subscribe()
    }

    /// After a resume: every modem and call listed again, what is found `learnedOnResume`.
    func resync() {
        guard owner != nil else { return }
        sync(resumed: true)
    }

    /// Stops all delivery: no event or notice after this returns.
    func stop() {
        for subscription in subscriptions { subscription.cancel() }
        subscriptions.removeAll()
        watch?.cancel()
        watch = nil
        forget()
    }

    /// Subscribes to signals of `interface` from the service. The rule names the service as
    /// sender, so the bus itself drops most spoofs; whatever still reaches us from anyone but
    /// the current owner becomes a `rejectedSignal` notice.
    func subscribe(path: String? = nil, interface: String, member: String? = nil, arguments: [Int: String] = [:],
                   _ handler: @escaping (Message) -> Void) {
        guard let watch else { return }
        let rule = MatchRule(sender: kind.serviceName, path: path, interface: interface, member: member,
                             arguments: arguments)
        let kind = self.kind
        let output = self.output
        let subscription = connection.subscribe(rule, owner: watch, onRejected: { [weak watch] message in
            // Before the first owner answer every sender looks foreign; the sync that follows
            // the answer covers whatever the real owner said meanwhile.
            guard watch?.isResolved == true else { return }
            output.notice(.rejectedSignal(kind, sender: CallText.clip(message.sender ?? "?"),
                                          member: CallText.clip(message.member ?? "?")))
        }, handler)
        subscriptions.append(subscription)
    }

    /// Calls a method on the current owner without blocking; `reply` runs exactly once, unless
    /// the owner goes away or `stop()` comes first (then never). A call for `round` counts as
    /// one of its requests until its reply has run. `priority` and `late`: `MethodCallQueue`.
    func call(path: String, interface: String, member: String, arguments: [DBusValue] = [],
              timeout: Double = 10, round: SyncRound? = nil, priority: MethodCallQueue.Priority = .routine,
              late: ((Result<Message, DBusError>) -> Void)? = nil,
              reply: @escaping (Result<Message, DBusError>) -> Void) {
        round?.begin()
        let counted: (Result<Message, DBusError>) -> Void = { [weak self] result in
            reply(result)
            if let round { self?.end(round) }
        }
        let message: Message
        do {
            guard let owner else { throw DBusError.disconnected }
            message = try Message.methodCall(destination: owner, path: ObjectPath(path), interface: interface,
                                             member: member)
            try message.append(values: arguments)
        } catch {
            // Not sent (no owner now, or a path or argument the bus would refuse): the reply says
            // why, on the loop's next turn as for a sent call.
            methodCalls.failSoon(counted, with: error as? DBusError ?? .invalidArgument("\(error)"))
            return
        }
        methodCalls.send(message, timeout: timeout, priority: priority, late: late, reply: counted)
    }

    /// A listing: what it answers reaches `use`, unless `round` is over by then or `stillWanted`
    /// says the thing listed is gone. An unreadable answer or an error is `round`'s failure
    /// (or refusal). Outside a sync (`round` nil: a modem that came later) an unreadable answer
    /// is reported as malformed and an error let go, as the next sync lists everything again.
    func list<T: DBusType>(_ type: T.Type, path: String, interface: String, member: String, what: String? = nil,
                           round: SyncRound?, stillWanted: @escaping () -> Bool = { true },
                           _ use: @escaping (T) -> Void) {
        let what = what ?? member
        let policyMayRefuse = self.policyMayRefuse
        let output = self.output
        call(path: path, interface: interface, member: member, round: round) { [weak self] result in
            guard let self, round == nil || self.round === round, stillWanted() else { return }
            switch result {
            case .success(let reply):
                guard let value = try? reply.decode(T.self) else {
                    let unreadable = "\(what) answered '\(reply.signature)'"
                    guard let round else { return output.notice(.malformed(output.kind, CallText.clip(unreadable))) }
                    round.fail(unreadable)
                    return
                }
                use(value)
            case .failure(let error):
                round?.failed(what, error, policyMayRefuse: policyMayRefuse)
            }
        }
    }

    /// A signal announced `path`: the sync in progress need not find it listed.
    func confirm(_ path: String) {
        round?.unconfirmed.remove(path)
    }

    private func sync(resumed: Bool) {
        guard let backend else { return }
        let round = SyncRound(knownCalls: backend.followedCalls, resumed: resumed)
        self.round = round
        backend.sync(round)
    }

    private func end(_ round: SyncRound) {
        guard round.end(), self.round === round else { return }
        self.round = nil
        if let refusal = round.refusal {
            if !refusalReported {
                refusalReported = true
                output.notice(.syncRefused(kind, refusal))
            }
            return
        }
        if let failure = round.failure {
            output.notice(.syncFailed(kind, failure))
            return
        }
        // Known before the round, not listed now, and no signal since: gone while we were not looking.
        for path in round.unconfirmed.sorted() {
            if let event = backend?.unconfirmedGone(path) { output.emit(event, resumed: round.resumed) }
        }
        output.notice(.synced(kind, modems: round.modems, calls: round.calls))
    }

    /// Drops every call in flight (their replies will not run), the sync, and what the backend knew.
    private func forget() {
        methodCalls.cancelAll()
        round = nil
        backend?.forgetAll()
    }
}
