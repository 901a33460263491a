import BGRunManager
import CallMonitor
import DBus
import Pipeline

/// telwatch's own D-Bus API (docs/dbus-api.md): `io.telwatch.Monitor1` with the ObjectManager
/// pattern, one `io.telwatch.Call1` object per live call, and the `Event` signal carrying exactly
/// the JSON line's keys, typed (written through `EventSchema`, as the JSON line is).
///
/// Signals (`Event`, `PropertiesChanged`, `InterfacesAdded`/`Removed`) go out only while at least
/// one client has called `Subscribe()` and is still on the bus, as systemd's `Manager.Subscribe()`
/// does: with nobody listening a call event costs a stored count, as the call objects are made from
/// the tracker's live calls when a client asks. Properties and `GetManagedObjects` answer at any time.
///
/// A sink after `TelManager` (the run an event causes is known when its event goes out) and
/// before `CallHookSink`.
public final class MonitorAPI: EventSink {
    public let connection: Connection
    /// Redaction follows a reloaded configuration.
    public var schema: EventSchema
    /// The live calls (what the call objects show), screening's word on each, `Silence`, and the
    /// run and state directory (`Run`, `LastSleep`, `StateDirectory`).
    private weak var session: SinkSession?
    /// The live calls as the tracker has them, in first-seen order.
    private var liveCalls: [CallSnapshot] { session?.liveCalls ?? [] }
    /// Where this telwatch keeps its run record and history, for `StateDirectory` ("" when nowhere):
    /// how `log` and `doctor` find the service's history without being told.
    var stateDirectory: String { session?.stateDirectory ?? "" }
    /// The last sleep as recorded in the state directory, for `LastSleep`.
    private func lastSleep() -> SleepRecord? {
        session?.stateDirectory.flatMap { RunStateStore.readSleep(directory: $0) }
    }

    private let manager: ObjectManager
    private let subscribers: ClientTracker
    /// Acts on calls, for callers polkit allows.
    let acts: APIActs
    /// `io.telwatch.Call1`, shared by every call's object.
    private let callInterface: ExportedInterface
    /// While someone is subscribed, the live calls as last announced, by id (to tell what changed);
    /// empty otherwise, when a call event costs the API nothing.
    private var calls: [String: CallSnapshot] = [:]
    private var liveCallNumber = 0
    private var backends: [(kind: BackendKind, state: BackendState)] = []
    /// What the root's properties said when last announced, kept small so that telling what
    /// changed costs next to nothing. A renewed lease alone is not announced: it moves with every
    /// call event (`lease_expires_at` is current whenever `Run` is read).
    private var announcedLiveCalls = 0
    private var announcedRun = RunKey()
    private var backendsChanged = false

    struct RunKey: Equatable {
        var id: String?
        var holders = 0
        var lock: LockState?
    }

    struct BackendState {
        var status: BackendStatus
        var owner: String?
        var modems: Int?
    }

    /// On a connection that owns the name already (`claimName(on:)`).
    public init(connection: Connection, schema: EventSchema, version: String, session: SinkSession?) throws {
        self.connection = connection
        self.schema = schema
        self.session = session
        subscribers = ClientTracker(connection: connection)
        let acts = APIActs(session: session, connection: connection)
        self.acts = acts
        callInterface = try CallObject.makeInterface(acts: acts)
        let root = ExportedObject(path: MonitorNames.path, interfaces: [])
        var callObjects: () -> [ExportedObject] = { [] }
        manager = try ObjectManager(connection: connection, root: root, objects: { callObjects() })
        let interface = try MonitorInterface.make(api: self, version: version)
        // After the ObjectManager interface (which the manager added as it exported the root).
        root.add(interface)
        // The objects are the tracker's live calls, made when a client asks.
        callObjects = { [unowned self] in self.liveCalls.compactMap { self.objectOrWarning($0) } }
        connection.export(subtree: ObjectSubtree(prefix: MonitorNames.callsPath, find: { [unowned self] path in
            self.liveCalls.first { self.pathOrWarning($0)?.rawValue == path }.flatMap { self.objectOrWarning($0) }
        }, paths: { [unowned self] in
            self.liveCalls.compactMap { self.pathOrWarning($0)?.rawValue }
        }))
        subscribers.onChange = { [unowned self] count in self.subscribersChanged(count) }
    }

    /// What asking for the bus name found.
    public enum Claim: Equatable {
        case owned
        /// Another connection has it: its unique name and, when the bus tells, its pid.
        case taken(owner: String, pid: UInt32?)
    }

    /// Asks for `io.telwatch.Monitor1` (blocking, at start-up, before anything else of the session
    /// is made), without queueing: a second telwatch is told at once that the first one has it.
    public static func claimName(on connection: Connection) throws -> Claim {
        switch try connection.requestName(MonitorNames.busName) {
        case .primaryOwner, .alreadyOwner: return .owned
        case .exists, .inQueue:
            let owner = (try? connection.callBlocking(
                destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
                member: "GetNameOwner", MonitorNames.busName, timeout: 5).decode(String.self)) ?? "?"
            let pid = try? connection.callBlocking(
                destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
                member: "GetConnectionUnixProcessID", owner, timeout: 5).decode(UInt32.self)
            return .taken(owner: owner, pid: pid)
        }
    }

    /// Stops answering: the objects go (telwatch runs on without its API).
    public func close() {
        subscribers.removeAll()
        connection.unexport(subtree: MonitorNames.callsPath)
        manager.close()
    }

    /// Kinds of trouble said once each (on the connection's warning line), never hidden.
    private var said: Set<String> = []

    private func sayOnce(_ kind: String, _ message: String) {
        guard said.insert(kind).inserted else { return }
        connection.onWarning("api: " + message + " (said once)")
    }

    /// A call's object path. Call ids are UUIDs, which always make one: a call without it would
    /// vanish from the API, so that is said, not hidden.
    private func pathOrWarning(_ call: CallSnapshot) -> ObjectPath? {
        do { return try MonitorNames.callPath(id: call.id) } catch {
            sayOnce("path", "call \(call.id.prefix(64)) has no object path, the API does not show it: \(error)")
            return nil
        }
    }

    private func objectOrWarning(_ call: CallSnapshot) -> ExportedObject? {
        guard pathOrWarning(call) != nil else { return nil }
        do { return try object(of: call) } catch {
            sayOnce("object", "call \(call.id.prefix(64)) has no object, the API does not show it: \(error)")
            return nil
        }
    }

    /// Sends a signal; a connection that cannot queue one (closed, out of memory) is said once.
    private func sendOrWarning(_ message: Message) {
        do { _ = try connection.send(message) } catch {
            sayOnce("send", "a signal could not be sent: \(error)")
        }
    }

    private func object(of call: CallSnapshot) throws -> ExportedObject {
        try CallObject.object(call, interface: callInterface, schema: schema, screening: session?.screening(of: call.id))
    }

    // MARK: Methods

    func subscribe(_ sender: String?) throws {
        guard let sender else { throw DBusError.remote(name: "org.freedesktop.DBus.Error.Failed", message: "no sender") }
        try subscribers.add(sender)
    }

    func silence(callID: String) throws {
        switch session?.silence(callID: callID) ?? .noSuchCall {
        case .silenced, .quietAlready:
            return
        case .noSuchCall:
            throw DBusError.remote(name: MonitorNames.noSuchCallError, message: "no live call has the id \(callID.prefix(64))")
        case .notRinging(let state):
            throw DBusError.remote(name: MonitorNames.notRingingError,
                                   message: "call \(callID.prefix(64)) is not ringing in (it is \(state.rawValue))")
        }
    }

    func unsubscribe(_ sender: String?) {
        guard let sender else { return }
        subscribers.remove(sender)
    }

    private func subscribersChanged(_ count: Int) {
        isSending = count > 0
        // A new subscriber's first PropertiesChanged compares with what is true now.
        calls = count == 0 ? [:] : Dictionary(liveCalls.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        announcedLiveCalls = liveCallNumber
        announcedRun = runKey(lock: session?.runRecord?.lock)
        backendsChanged = false
    }

    private func runKey(lock: LockState?) -> RunKey {
        let run = session?.liveRun
        return RunKey(id: run?.id, holders: run?.holders ?? 0, lock: lock)
    }

    private var saidInvalidSignal = false
    /// Someone listens: the one thing a call event asks here.
    private var isSending = false

    // MARK: Properties

    var liveCallCount: DBusValue { .uint32(UInt32(clamping: liveCallNumber)) }

    var runValue: DBusValue {
        var fields = PropertyFields()
        if let record = session?.runRecord { schema.write(record, into: &fields) }
        return fields.value
    }

    var backendsValue: DBusValue {
        .dictionary(keySignature: "s", valueSignature: "a{sv}", backends.map { kind, state in
            var fields = PropertyFields()
            fields.add("status", state.status.rawValue)
            fields.add("owner", state.owner)
            if let modems = state.modems { fields.add("modems", modems) }
            return .init(.string(kind.rawValue), fields.value)
        })
    }

    var lastSleepValue: DBusValue {
        var fields = PropertyFields()
        if let record = lastSleep() { schema.write(record, into: &fields) }
        return fields.value
    }

    // MARK: Events

    public func receive(_ delivery: Delivery) {
        let event = delivery.event, liveCalls = delivery.liveCalls
        liveCallNumber = liveCalls
        guard isSending else {
            // Nobody listens: only what the properties say is kept (the objects are the tracker's).
            if case .backend(let notice, _) = event { noted(notice) }
            return
        }
        switch event {
        case .calls(let events, let time):
            for call in events {
                let contact = call.call.flatMap { delivery.contact(of: $0.number) }
                switch call {
                case .transition(let snapshot, _) where snapshot.state == .disconnected:
                    sendEvent { schema.write(call, time: time, liveCalls: liveCalls, contact: contact, into: &$0) }
                    remove(snapshot)
                case .transition(let snapshot, _), .updated(let snapshot):
                    show(snapshot)
                    sendEvent { schema.write(call, time: time, liveCalls: liveCalls, contact: contact, into: &$0) }
                case .missed:
                    sendEvent { schema.write(call, time: time, liveCalls: liveCalls, contact: contact, into: &$0) }
                case .busy, .idle, .announced, .withdrawn:
                    break
                }
            }
        case .run(let run):
            sendEvent { schema.write(run, liveCalls: liveCalls, into: &$0) }
        case .sleep(let sleep):
            sendEvent { schema.write(sleep, liveCalls: liveCalls, into: &$0) }
        case .backend(let notice, let time):
            noted(notice)
            sendEvent { schema.write(notice, time: time, into: &$0) }
        case .ready(let time):
            sendEvent { schema.writeReady(time: time, liveCalls: liveCalls, into: &$0); return true }
        case .stats(let stats):
            sendEvent { schema.write(stats, liveCalls: liveCalls, into: &$0); return true }
        case .screened(let screened, let time):
            if calls[screened.call.id] != nil, let path = pathOrWarning(screened.call) {
                sendCallChanges([(CallObject.screeningProperty, .string(screened.action.rawValue))], path: path)
            }
            sendEvent { schema.write(screened, time: time, liveCalls: liveCalls, into: &$0); return true }
        case .acted(let acted, let time):
            sendEvent { schema.write(acted, time: time, liveCalls: liveCalls, into: &$0); return true }
        case .hook:
            break
        }
        announceRootChanges(after: event)
    }

    /// Sends one `Event` signal (someone listens); `write` fills its fields and says whether the
    /// event is data at all (`EventSchema`'s rule, as for the JSON line). Nothing is left to
    /// finish as telwatch stops: the API answers until it exits, and the exit line's `Event` goes out.
    private func sendEvent(_ write: (inout SignalFields) -> Bool) {
        var fields = SignalFields()
        guard write(&fields) else { return }
        guard let message = fields.message() else {
            // Said once: every text comes from the bus, where a NUL cannot be, so this is a bug.
            if !saidInvalidSignal { connection.onWarning("api: an Event signal was not valid D-Bus: not sent") }
            saidInvalidSignal = true
            return
        }
        sendOrWarning(message)
    }

    /// With nobody subscribed, nothing: the objects are made from the tracker when asked for.
    private func show(_ call: CallSnapshot) {
        guard isSending else { return }
        let old = calls.updateValue(call, forKey: call.id)
        do {
            if let old {
                let changed = CallObject.changes(from: old, to: call, schema: schema)
                if !changed.isEmpty { sendCallChanges(changed, path: try MonitorNames.callPath(id: call.id)) }
            } else {
                try manager.announceAdded(try object(of: call))
            }
        } catch {
            connection.onWarning("api: call \(call.id) could not be announced: \(error)")
        }
    }

    /// A call's `PropertiesChanged`, in wire format as the `Event` is: one goes with nearly every
    /// call event.
    private func sendCallChanges(_ changed: [(name: String, value: DBusValue)], path: ObjectPath) {
        var signal = WireSignal(path: path, interface: BusDaemon.propertiesInterface, member: "PropertiesChanged",
                                signature: "sa{sv}as")
        signal.string(MonitorNames.callInterface)
        let entries = signal.beginVardict()
        for (name, value) in changed { signal.entry(name, value) }
        signal.endVardict(entries)
        signal.emptyStringArray()
        if let message = signal.message() { sendOrWarning(message) }
    }

    private func remove(_ call: CallSnapshot) {
        guard isSending, calls.removeValue(forKey: call.id) != nil, let path = pathOrWarning(call) else { return }
        do { try manager.announceRemoved(path, interfaces: [MonitorNames.callInterface]) } catch {
            sayOnce("removed", "InterfacesRemoved could not be sent: \(error)")
        }
    }

    private func noted(_ notice: BackendNotice) {
        if case .modemsChanged(let kind, let modems) = notice,
           let index = backends.firstIndex(where: { $0.kind == kind }) {
            backends[index].state.modems = modems
            backendsChanged = true
            return
        }
        guard let status = notice.status else { return }
        let kind = notice.backend
        var state = backends.first { $0.kind == kind }?.state ?? BackendState(status: status)
        state.status = status
        switch notice {
        case .serviceAppeared(_, let owner): state.owner = owner; state.modems = nil
        case .serviceVanished, .serviceAbsent: state.owner = nil; state.modems = nil
        case .synced(_, let modems, _): state.modems = modems
        default: break
        }
        backendsChanged = true
        if let index = backends.firstIndex(where: { $0.kind == kind }) {
            backends[index].state = state
        } else {
            backends.append((kind, state))
            backends.sort { $0.kind.rawValue < $1.kind.rawValue }
        }
    }

    /// `PropertiesChanged` on the root for what `event` changed.
    private func announceRootChanges(after event: PipelineEvent) {
        var changed: [String: DBusValue] = [:]
        if liveCallNumber != announcedLiveCalls {
            announcedLiveCalls = liveCallNumber
            changed["LiveCalls"] = liveCallCount
        }
        var run = runKey(lock: announcedRun.lock)
        if case .run = event { run.lock = session?.runRecord?.lock }
        if run != announcedRun {
            announcedRun = run
            changed["Run"] = runValue
        }
        if backendsChanged {
            backendsChanged = false
            changed["Backends"] = backendsValue
        }
        if case .sleep = event { changed["LastSleep"] = lastSleepValue }
        guard !changed.isEmpty else { return }
        do {
            try connection.emitPropertiesChanged(path: MonitorNames.path, interface: MonitorNames.interface,
                                                 changed: changed)
        } catch {
            sayOnce("properties", "PropertiesChanged could not be sent: \(error)")
        }
    }
}
