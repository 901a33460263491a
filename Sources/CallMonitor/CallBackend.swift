// What every backend is, what it may tell the user, and the bus plumbing they share.
//
// A backend turns one telephony stack's bus traffic into `BackendEvent`s for the tracker and
// `BackendNotice`s for the user. It never prints and never spawns; everything runs on the
// connection's loop thread and every method call it makes is non-blocking.

import DBus
import Loop

/// One telephony stack followed on the bus.
public protocol CallBackend: AnyObject {
    var kind: BackendKind { get }
    /// Signals from the service's current owner whose body decoded as expected
    /// (rejected and malformed ones are not counted).
    var decodedSignals: UInt64 { get }
    /// Subscribes, watches the service's name, and syncs whenever an owner appears.
    func start() throws
    /// After a resume: reads every modem and call again; what it finds reaches the tracker as
    /// `learnedOnResume`, to be reconciled with what was known before the sleep.
    func resync()
    /// Stops all delivery: no event or notice after this returns.
    func stop()
    /// Asks the stack to hang the call at `path` up, without waiting: `done(nil)` once it did,
    /// `done(why)` when it refused or could not be asked (polkit, the stack gone). Call screening's
    /// one method call that changes anything (docs/screening.md).
    func hangUp(_ path: String, done: @escaping (String?) -> Void)
}

/// A stack's state as the event stream reports it (`{"event":"backend","status":…}`).
public enum BackendStatus: String, Sendable {
    case appeared, vanished, absent, synced
    case syncRefused = "sync-refused"
    case syncFailed = "sync-failed"
}

/// Things the user should hear about on stderr. Calls themselves travel as `TrackerEvent`s.
public enum BackendNotice: Sendable, Equatable, CustomStringConvertible {
    /// The service's name has an owner (at start, or after a restart); a sync follows.
    case serviceAppeared(BackendKind, owner: String)
    /// The owner went away: its calls ended with reason `backend-lost`. `liveCalls` is how many
    /// of its calls were live then (`CallMonitor` counts them: a backend does not know the tracker),
    /// so that "its live calls ended" is said only when there were some.
    case serviceVanished(BackendKind, liveCalls: Int = 0)
    /// Nobody owned the name at start; the backend waits for it.
    case serviceAbsent(BackendKind)
    /// A sync finished: voice modems and calls listed.
    case synced(BackendKind, modems: Int, calls: Int)
    /// The number of voice modems changed after a sync (a modem added, removed, or given or
    /// denied its voice interface): what `Backends` reports follows it. Not shown in the event
    /// stream: a modem is not a call.
    case modemsChanged(BackendKind, modems: Int)
    /// The service's policy refused our listing (oFono's at_console rule); said once per backend.
    /// Calls are still followed from signals.
    case syncRefused(BackendKind, String)
    /// A listing failed for another reason (timeout, error reply, unreadable reply).
    case syncFailed(BackendKind, String)
    /// One call's properties could not be read; it is followed from its next signal.
    case callUnreadable(BackendKind, String)
    /// A signal that matched our rules but did not come from the service's current owner.
    case rejectedSignal(BackendKind, sender: String, member: String)
    /// How many further rejected signals from `sender` were not reported one by one.
    case rejectedSuppressed(BackendKind, sender: String, count: Int)
    /// A message from the owner that we could not use (wrong signature, unknown value, huge
    /// string): skipped, or the unusable part left out.
    case malformed(BackendKind, String)
    /// How many further malformed notices were not reported one by one.
    case malformedSuppressed(BackendKind, count: Int)
    /// How many further unreadable-call notices were not reported one by one.
    case unreadableSuppressed(BackendKind, count: Int)
    /// The emergency numbers the stack lists for a modem (ModemManager: its SIM's
    /// `EmergencyNumbers`; oFono: `VoiceCallManager.EmergencyNumbers`), digits only, for call
    /// screening (docs/screening.md). Not shown in the event stream.
    case emergencyNumbers(BackendKind, modem: String, [String])

    /// What a notice says about the stack itself, for the event stream; nil for notices that are
    /// only warnings.
    public var status: BackendStatus? {
        switch self {
        case .serviceAppeared: return .appeared
        case .serviceVanished: return .vanished
        case .serviceAbsent: return .absent
        case .synced: return .synced
        case .syncRefused: return .syncRefused
        case .syncFailed: return .syncFailed
        case .callUnreadable, .rejectedSignal, .rejectedSuppressed, .malformed, .malformedSuppressed,
             .unreadableSuppressed, .modemsChanged, .emergencyNumbers: return nil
        }
    }

    /// Whether the notice reports a problem the user should look at (stderr, whatever the output).
    public var isWarning: Bool {
        switch self {
        case .syncRefused, .syncFailed, .callUnreadable, .rejectedSignal, .rejectedSuppressed, .malformed,
             .malformedSuppressed, .unreadableSuppressed: return true
        case .serviceAppeared, .serviceVanished, .serviceAbsent, .synced, .modemsChanged, .emergencyNumbers: return false
        }
    }

    public var backend: BackendKind {
        switch self {
        case .serviceAppeared(let kind, _), .serviceVanished(let kind, _), .serviceAbsent(let kind),
             .synced(let kind, _, _), .modemsChanged(let kind, _), .syncRefused(let kind, _), .syncFailed(let kind, _), .callUnreadable(let kind, _),
             .rejectedSignal(let kind, _, _), .rejectedSuppressed(let kind, _, _), .malformed(let kind, _),
             .malformedSuppressed(let kind, _), .unreadableSuppressed(let kind, _), .emergencyNumbers(let kind, _, _):
            return kind
        }
    }

    /// One line for stderr, without the program name.
    public var description: String {
        let name = backend.rawValue
        let service = backend.serviceName
        switch self {
        case .serviceAppeared(_, let owner): return "\(name): \(service) is running (owner \(owner))"
        case .serviceVanished(_, let live):
            return "\(name): \(service) went away" + (live == 0 ? "" : "; its live calls ended (backend-lost)")
        case .serviceAbsent: return "\(name): \(service) is not running; waiting for it"
        case .synced(_, let modems, let calls):
            return "\(name): synced: \(modems) voice modem\(modems == 1 ? "" : "s"), \(calls) call\(calls == 1 ? "" : "s")"
        case .modemsChanged(_, let modems): return "\(name): \(modems) voice modem\(modems == 1 ? "" : "s") now"
        case .syncRefused(_, let why):
            return "\(name): \(service) refused to list modems and calls to this user (\(why)); "
                + "following calls from signals only: calls already in progress are seen at their next change"
        case .syncFailed(_, let why): return "\(name): sync failed: \(why)"
        case .callUnreadable(_, let why): return "\(name): \(why)"
        case .rejectedSignal(_, let sender, let member):
            return "\(name): ignored \(member) from \(sender): not the owner of \(service)"
        case .rejectedSuppressed(_, let sender, let count):
            return "\(name): ignored \(count) more signal\(count == 1 ? "" : "s") from \(sender)"
        case .malformed(_, let what): return "\(name): skipped: \(what)"
        case .malformedSuppressed(_, let count):
            return "\(name): skipped \(count) more malformed message\(count == 1 ? "" : "s")"
        case .unreadableSuppressed(_, let count):
            return "\(name): \(count) more call\(count == 1 ? "" : "s") could not be read"
        case .emergencyNumbers(_, let modem, let numbers):
            return "\(name): \(CallText.clip(modem)) lists emergency numbers: "
                + (numbers.isEmpty ? "none" : numbers.joined(separator: " "))
        }
    }
}

extension BackendKind {
    /// The well-known bus name the stack owns.
    public var serviceName: String {
        switch self {
        case .modemManager: return ModemManagerBus.service
        case .ofono: return OfonoBus.service
        }
    }
}

/// Strings from the bus end up on stdout and in hook environments: a value no real number or
/// name comes close to is an error, not data.
enum CallText {
    static let maxBytes = 256

    static func fits(_ text: String) -> Bool { text.utf8.count <= maxBytes }

    /// For notices: long or hostile values shortened.
    static func clip(_ text: String, _ limit: Int = 80) -> String {
        text.utf8.count <= limit ? text : String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "…"
    }
}

/// `(oa{sv})`: an object and its properties, as oFono's GetModems and GetCalls list them.
public struct PathProperties: DBusType {
    public var path: ObjectPath
    public var properties: PropertyMap

    public static var dbusSignature: String { "(oa{sv})" }

    public init(from reader: inout MessageReader) throws {
        (path, properties) = try reader.readStruct(signature: Self.dbusSignature) { inner in
            (try inner.read(ObjectPath.self), try inner.read(PropertyMap.self))
        }
    }

    public init?(dbusValue: DBusValue) {
        guard case .structure(let fields) = dbusValue, fields.count == 2,
              let path = ObjectPath(dbusValue: fields[0]), let properties = PropertyMap(dbusValue: fields[1])
        else { return nil }
        self.path = path
        self.properties = properties
    }

    public var dbusValue: DBusValue { .structure([.objectPath(path), properties.dbusValue]) }
}

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

/// A backend as its `ServiceLink` runs it: the link does what every stack needs (the owner, its
/// syncs, stopping), the backend only what is its stack's own.
protocol LinkedBackend: CallBackend {
    var link: ServiceLink { get }
    /// Subscribes (through `link`) to the stack's signals.
    func subscribe()
    /// The calls followed now: a sync expects to find each of them listed again.
    var followedCalls: [String] { get }
    /// Sends `round`'s first listing (through `link`, so that the round counts it).
    func sync(_ round: SyncRound)
    /// Drops every modem and call: the owner went away, or the backend stops.
    func forgetAll()
    /// A call known before `round` that neither a listing nor a signal has vouched for since:
    /// dropped, and the event that ends it; nil when the backend keeps it.
    func unconfirmedGone(_ path: String) -> BackendEvent?
    /// The interface of a call object, whose `Hangup` ends it.
    static var callInterface: String { get }
}

extension LinkedBackend {
    public var kind: BackendKind { link.kind }
    public func start() throws { try link.start(self) }
    public func resync() { link.resync() }
    public func stop() { link.stop() }

    public func hangUp(_ path: String, done: @escaping (String?) -> Void) {
        link.call(path: path, interface: Self.callInterface, member: "Hangup", timeout: 5, priority: .ring) { result in
            switch result {
            case .success: done(nil)
            case .failure(let error): done(error.description)
            }
        }
    }
}

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
        guard let owner, let objectPath = try? ObjectPath(path),
              let message = try? Message.methodCall(destination: owner, path: objectPath, interface: interface,
                                                    member: member),
              (try? message.append(values: arguments)) != nil
        else {
            methodCalls.failSoon(counted)
            return
        }
        methodCalls.send(message, timeout: timeout, priority: priority, late: late, reply: counted)
    }

    /// A listing: what it answers reaches `use`, unless `round` is over by then or `stillWanted`
    /// says the thing listed is gone. An unreadable answer or an error is `round`'s failure
    /// (or refusal); outside a sync (`round` nil: a modem that came later) it is let go, as the
    /// next sync lists everything again.
    func list<T: DBusType>(_ type: T.Type, path: String, interface: String, member: String, what: String? = nil,
                           round: SyncRound?, stillWanted: @escaping () -> Bool = { true },
                           _ use: @escaping (T) -> Void) {
        let what = what ?? member
        let policyMayRefuse = self.policyMayRefuse
        call(path: path, interface: interface, member: member, round: round) { [weak self] result in
            guard let self, round == nil || self.round === round, stillWanted() else { return }
            switch result {
            case .success(let reply):
                guard let value = try? reply.decode(T.self) else {
                    round?.fail("\(what) answered '\(reply.signature)'")
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

/// Method calls to one owner of a service, within what the bus allows: dbus-daemon counts every
/// call against the caller's connection until its callee answers or leaves the bus, whatever
/// the caller's own timeout, and past its limit (128, system bus too) refuses every further
/// call on that connection (docs/modem-stacks.md §8). So an owner that stops answering must not
/// be asked without end:
/// - at most `maxInFlight` calls are out at once, and at most `budget` counted at the bus
///   (out, or timed out here and not answered yet);
/// - while any call has timed out and not been answered (the breaker is open), one call at a
///   time probes the owner, and only while `reserve` places of the budget stay free;
/// - a new call's first read (`.ring`) goes before everything else, newest first, and while it is
///   fresh it is sent at once, past the open breaker and into the reserve: a real ring never waits
///   behind reads that will never be answered, however many of those there are;
/// - a late answer still reaches the caller (`late`), and frees its place in the budget;
/// - at most `maxWaiting` calls wait; past that the oldest is refused.
final class MethodCallQueue {
    enum Priority {
        /// The first read of a call that just appeared: what a ringing phone waits for.
        case ring
        /// Listings and reads again: they can wait.
        case routine
    }

    static let maxInFlight = 32
    static let budget = 64
    /// Places of the budget only fresh ring reads may take.
    static let reserve = 16
    static let maxWaiting = 256
    /// A ring read this young is sent past the open breaker, up to `freshPastBreaker` at once.
    static let fresh = 1.0
    static let freshPastBreaker = 4

    private struct WaitingCall {
        let message: Message
        let timeout: Double
        let queued: Double
        let reply: (Result<Message, DBusError>) -> Void
        let late: ((Result<Message, DBusError>) -> Void)?
    }

    private let connection: Connection
    private var ring: [WaitingCall] = []
    private var routine: [WaitingCall] = []
    private var inFlight: [UInt64: PendingCall] = [:]
    /// Calls that timed out here but that the bus still counts, by serial.
    private var unanswered: Set<UInt32> = []
    private var nextCall: UInt64 = 0
    private var epoch: UInt64 = 0
    /// Some call timed out and its answer has not come: the owner may not answer at all.
    var isBreakerOpen: Bool { !unanswered.isEmpty }

    init(connection: Connection) {
        self.connection = connection
    }

    /// Calls counted against the connection at the bus now.
    var counted: Int { inFlight.count + unanswered.count }
    var waitingCount: Int { ring.count + routine.count }

    /// `reply` runs exactly once, unless `cancelAll()` comes first (then never). With `late`, an
    /// answer that comes after the call timed out (after `reply` saw `.timedOut`) reaches it too.
    func send(_ message: Message, timeout: Double, priority: Priority = .routine,
              late: ((Result<Message, DBusError>) -> Void)? = nil,
              reply: @escaping (Result<Message, DBusError>) -> Void) {
        let call = WaitingCall(message: message, timeout: timeout, queued: monotonicNow(), reply: reply, late: late)
        switch priority {
        case .ring: ring.append(call)
        case .routine: routine.append(call)
        }
        if waitingCount > MethodCallQueue.maxWaiting {
            // The oldest routine call, else the oldest ring read: the newest are what matters.
            let dropped = routine.isEmpty ? ring.removeFirst() : routine.removeFirst()
            let refusal = DBusError.remote(name: MethodCallQueue.limitsExceeded,
                                           message: "not sent: \(MethodCallQueue.maxWaiting) calls were already waiting")
            let epoch = self.epoch
            connection.loop.soon { [weak self] in
                guard let self, self.epoch == epoch else { return }
                dropped.reply(.failure(refusal))
            }
        }
        sendWaiting()
    }

    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    /// A call that could not be sent fails on the loop's next turn, as a sent one would: its
    /// caller never sees its reply before the call returns.
    func failSoon(_ reply: @escaping (Result<Message, DBusError>) -> Void) {
        let epoch = self.epoch
        connection.loop.soon { [weak self] in
            guard let self, self.epoch == epoch else { return }
            reply(.failure(.disconnected))
        }
    }

    /// Drops every call waiting or in flight: their replies will not run. For an owner that left
    /// the bus, which freed everything the bus counted for it.
    func cancelAll() {
        epoch &+= 1
        ring.removeAll()
        routine.removeAll()
        let pending = inFlight
        inFlight.removeAll()
        for call in pending.values { call.cancel() }
        for serial in unanswered { connection.forgetLateReply(to: serial) }
        unanswered.removeAll()
    }

    private func canSend(_ call: WaitingCall, ring isRing: Bool) -> Bool {
        guard counted < MethodCallQueue.budget else { return false }
        if isBreakerOpen, isRing, monotonicNow() - call.queued < MethodCallQueue.fresh {
            // Into the reserve, past the probe, a few at a time: a stream of new calls that are
            // never answered takes the reserve slowly, a real ring gets through at once.
            return inFlight.count < 1 + MethodCallQueue.freshPastBreaker
        }
        guard counted < MethodCallQueue.budget - MethodCallQueue.reserve else { return false }
        return isBreakerOpen ? inFlight.isEmpty : inFlight.count < MethodCallQueue.maxInFlight
    }

    private func sendWaiting() {
        while true {
            let isRing = !ring.isEmpty
            guard let next = isRing ? ring.last : routine.first, canSend(next, ring: isRing) else { return }
            if isRing { ring.removeLast() } else { routine.removeFirst() }
            let token = nextCall
            nextCall &+= 1
            var serial: UInt32 = 0
            let pending = connection.call(next.message, timeout: next.timeout) { [weak self] result in
                guard let self, self.inFlight.removeValue(forKey: token) != nil else { return }
                if case .failure(.timedOut) = result { self.timedOut(serial, late: next.late) }
                next.reply(result)
                self.sendWaiting()
            }
            // No handle: the connection is gone and its own failure reply finds no token, so report here.
            guard let pending else {
                failSoon(next.reply)
                continue
            }
            serial = pending.serial
            inFlight[token] = pending
        }
    }

    /// The bus still counts the call; the owner is not answering.
    private func timedOut(_ serial: UInt32, late: ((Result<Message, DBusError>) -> Void)?) {
        unanswered.insert(serial)
        let epoch = self.epoch
        connection.awaitLateReply(toSerial: serial) { [weak self] message in
            guard let self, self.epoch == epoch else { return }
            self.unanswered.remove(serial)
            late?(message.asError.map { .failure($0) } ?? .success(message))
            self.sendWaiting()
        }
    }
}

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
