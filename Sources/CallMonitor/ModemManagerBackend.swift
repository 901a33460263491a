// ModemManager (docs/modem-stacks.md §2): modems through the ObjectManager, calls through Modem.Voice,
// call state through Call.StateChanged and PropertiesChanged.

import DBus

enum ModemManagerBus {
    static let service = "org.freedesktop.ModemManager1"
    static let root = "/org/freedesktop/ModemManager1"
    static let voice = "org.freedesktop.ModemManager1.Modem.Voice"
    static let call = "org.freedesktop.ModemManager1.Call"
    static let terminated: Int32 = 7
    /// MMCallState values the daemon defines (0 UNKNOWN … 7 TERMINATED).
    static let knownStates: ClosedRange<Int32> = 0...7
}

/// What a Properties.GetAll or PropertiesChanged said about a call; nil = not said, or unusable.
struct ModemManagerCallProperties: Equatable {
    var state: Int32?
    var reason: Int32?
    var direction: Int32?
    var number: String?
    var multiparty: Bool?

    init(state: Int32? = nil, reason: Int32? = nil, direction: Int32? = nil, number: String? = nil,
         multiparty: Bool? = nil) {
        self.state = state
        self.reason = reason
        self.direction = direction
        self.number = number
        self.multiparty = multiparty
    }

    /// Reads the properties telwatch uses; one of the wrong type, an unknown state or a huge
    /// number is described in `problems` and left out, the others still count.
    init(_ map: PropertyMap, problems: inout [String]) {
        func int32(_ key: String) -> Int32? {
            guard let value = map[key] else { return nil }
            guard let int = value.value.int32 else {
                problems.append("\(key) is not an int32 (\(CallText.clip(value.value.signature.rawValue)))")
                return nil
            }
            return int
        }
        state = int32("State")
        if let state, !ModemManagerBus.knownStates.contains(state) {
            problems.append("unknown call state \(state)")
        }
        reason = int32("StateReason")
        direction = int32("Direction")
        if let value = map["Number"] {
            if let number = value.value.string, CallText.fits(number) {
                self.number = number
            } else if let number = value.value.string {
                problems.append("Number of \(number.utf8.count) bytes")
            } else {
                problems.append("Number is not a string (\(value.value.signature.rawValue))")
            }
        }
        if let value = map["Multiparty"] {
            multiparty = value.value.bool
            if multiparty == nil { problems.append("Multiparty is not a boolean (\(value.value.signature.rawValue))") }
        }
    }

    var isEmpty: Bool { self == ModemManagerCallProperties() }

    /// As tracker input; `direction` is the call's last known direction (it decides what
    /// WAITING and UNKNOWN mean) and is updated when these properties carry one.
    func observation(direction: inout Int32) -> CallObservation {
        if let newDirection = self.direction { direction = newDirection }
        return CallObservation(
            phase: state.map { ModemManagerMapping.phase(state: $0, direction: direction) },
            direction: self.direction.map(ModemManagerMapping.direction),
            number: number,
            multiparty: multiparty,
            reason: reason.map { ModemManagerMapping.reason($0) },
            everConnected: reason.flatMap { ModemManagerMapping.impliesConnected($0) ? true : nil })
    }
}

/// A change to one call, as it arrived.
enum ModemManagerCallUpdate: Equatable {
    case stateChanged(old: Int32, new: Int32, reason: UInt32)
    case properties(ModemManagerCallProperties)

    func observation(direction: inout Int32) -> CallObservation {
        switch self {
        case let .stateChanged(_, new, reason):
            return CallObservation(phase: ModemManagerMapping.phase(state: new, direction: direction),
                                   reason: ModemManagerMapping.reason(reason))
        case let .properties(properties):
            return properties.observation(direction: &direction)
        }
    }

    var newState: Int32? {
        switch self {
        case let .stateChanged(_, new, _): return new
        case let .properties(properties): return properties.state
        }
    }
}

/// A call's `CallAdded` carries only its path, so its properties are fetched; changes that
/// arrive while the fetch is out are older than its answer (one sender's messages stay in
/// order). Replaying the answer alone would lose them (a call that rang and ended before the
/// answer would look like history), replaying them after the answer would go backwards. So the
/// call starts in the state it had before the first queued change, the changes follow in order,
/// and the fetched properties come last as the newest word.
enum ModemManagerCallReplay {
    struct Result {
        var events: [BackendEvent]
        var direction: Int32
        var terminated: Bool
    }

    static func replay(key: CallKey, modem: String, initial: Bool, fetched: ModemManagerCallProperties?,
                       queued: [ModemManagerCallUpdate]) -> Result {
        var direction = fetched?.direction ?? firstDirection(queued) ?? 0
        var start = ModemManagerCallProperties(direction: direction, number: fetched?.number,
                                               multiparty: fetched?.multiparty)
        switch queued.first(where: { $0.newState != nil }) {
        case let .stateChanged(old, _, _)?:
            start.state = old
        case let .properties(properties)?:
            start.state = properties.state
            start.reason = properties.reason
        case nil:
            start.state = fetched?.state
            start.reason = fetched?.reason
        }
        let lastState = fetched?.state ?? queued.last(where: { $0.newState != nil })?.newState ?? start.state
        guard start.state != nil else {
            // Nothing says what state the call is in: it cannot be placed.
            return Result(events: [], direction: direction, terminated: lastState == ModemManagerBus.terminated)
        }
        var events: [BackendEvent] = [.callAppeared(key, modem: modem, start.observation(direction: &direction),
                                                    initial: initial)]
        for update in queued {
            events.append(.callChanged(key, update.observation(direction: &direction)))
        }
        if let fetched, !queued.isEmpty {
            events.append(.callChanged(key, fetched.observation(direction: &direction)))
        }
        return Result(events: events, direction: direction, terminated: lastState == ModemManagerBus.terminated)
    }

    private static func firstDirection(_ queued: [ModemManagerCallUpdate]) -> Int32? {
        for case let .properties(properties) in queued {
            if let direction = properties.direction { return direction }
        }
        return nil
    }
}

/// Follows `org.freedesktop.ModemManager1`.
public final class ModemManagerBackend: CallBackend {
    public let kind = BackendKind.modemManager
    public private(set) var decodedSignals: UInt64 = 0

    private struct CallRecord {
        /// "" until a listing or CallAdded names it (a signal can beat both during a sync).
        var modem: String
        var direction: Int32 = 0
        var terminated = false
        /// Non-nil while the call's properties are being fetched: what arrived meanwhile, in order.
        var queue: [ModemManagerCallUpdate]?
        var fetch: UInt64 = 0
        var initial: Bool
        /// CallDeleted arrived while the fetch was out.
        var deleted = false
        /// Read by the resync after a resume: what the read finds is `learnedOnResume`.
        var resumed = false
        /// Non-zero while a known call is read again after a resume (its answer is matched by this).
        var refresh: UInt64 = 0
    }

    /// Changes kept per call while its properties are being read.
    static let maxQueued = 64

    private let link: ServiceLink
    private let onEvent: (BackendEvent) -> Void
    private let onNotice: (BackendNotice) -> Void
    private var modems: Set<String> = []
    private var calls: [String: CallRecord] = [:]
    private var round: SyncRound?
    private var nextFetch: UInt64 = 0

    public init(connection: Connection, onEvent: @escaping (BackendEvent) -> Void,
                onNotice: @escaping (BackendNotice) -> Void) {
        self.onEvent = onEvent
        self.onNotice = onNotice
        link = ServiceLink(kind: .modemManager, connection: connection, onNotice: onNotice)
    }

    public func start() throws {
        guard !link.isStarted else { return }
        try link.start(sync: { [weak self] in self?.sync() }, forget: { [weak self] in self?.forget() },
                       onEvent: onEvent)
        link.subscribe(path: ModemManagerBus.root, interface: BusDaemon.objectManagerInterface) { [weak self] in
            self?.objectManagerSignal($0)
        }
        link.subscribe(interface: ModemManagerBus.voice) { [weak self] in self?.voiceSignal($0) }
        link.subscribe(interface: ModemManagerBus.call, member: "StateChanged") { [weak self] in
            self?.stateChanged($0)
        }
        link.subscribe(interface: BusDaemon.propertiesInterface, member: "PropertiesChanged",
                       arguments: [0: ModemManagerBus.call]) { [weak self] in self?.propertiesChanged($0) }
    }

    public func stop() {
        link.stop()
        forget()
    }

    /// After a resume: lists modems and calls again, reads every known live call again (a
    /// change while the system slept has no signal telwatch saw), and reports what it finds as
    /// `learnedOnResume`. A terminated call found that was never seen came and went meanwhile.
    public func resync() {
        guard link.owner != nil else { return }
        sync(resumed: true)
    }

    private func forget() {
        link.cancelCalls()
        modems.removeAll()
        calls.removeAll()
        round = nil
    }

    // MARK: Sync

    private func sync(resumed: Bool = false) {
        let round = SyncRound(knownCalls: calls.keys, resumed: resumed)
        self.round = round
        round.begin()
        link.call(path: ModemManagerBus.root, interface: BusDaemon.objectManagerInterface,
                  member: "GetManagedObjects") { [weak self] result in
            guard let self, self.round === round else { return }
            switch result {
            case .success(let reply):
                if let objects = try? reply.decode([ObjectPath: [String: PropertyMap]].self) {
                    self.listed(modems: objects, round: round)
                } else {
                    round.fail("GetManagedObjects answered '\(reply.signature)'")
                }
            case .failure(let error):
                round.fail("GetManagedObjects: \(error)")
            }
            self.end(round)
        }
    }

    private func listed(modems objects: [ObjectPath: [String: PropertyMap]], round: SyncRound) {
        let voiceModems = Set(objects.filter { $0.value[ModemManagerBus.voice] != nil }.map(\.key.rawValue))
        for modem in modems.subtracting(voiceModems).sorted() { modemGone(modem, resumed: round.resumed) }
        round.modems = voiceModems.count
        for modem in voiceModems.sorted() {
            modems.insert(modem)
            listCalls(modem, round: round)
        }
    }

    private func listCalls(_ modem: String, round: SyncRound?) {
        round?.begin()
        link.call(path: modem, interface: ModemManagerBus.voice, member: "ListCalls") { [weak self] result in
            guard let self else { return }
            defer { if let round { self.end(round) } }
            guard round == nil || self.round === round, self.modems.contains(modem) else { return }
            switch result {
            case .success(let reply):
                guard let paths = try? reply.decode([ObjectPath].self) else {
                    round?.fail("ListCalls on \(modem) answered '\(reply.signature)'")
                    return
                }
                round?.calls += paths.count
                for path in paths.map(\.rawValue) {
                    round?.unconfirmed.remove(path)
                    self.callListed(path, modem: modem, round: round)
                }
            case .failure(let error):
                round?.fail("ListCalls on \(modem): \(error)")
            }
        }
    }

    private func callListed(_ path: String, modem: String, round: SyncRound?) {
        guard var record = calls[path] else {
            // Only a sync's listing finds calls that were live before we looked.
            fetch(path, modem: modem, initial: round != nil, queued: [], round: round)
            return
        }
        if record.modem.isEmpty {
            record.modem = modem
            calls[path] = record
            // A call first seen through a signal: tell the tracker which modem it is on.
            if record.queue == nil, !record.terminated {
                onEvent(.callAppeared(key(path), modem: modem, CallObservation(), initial: false))
            }
        }
        // After a resume a live call may have changed unseen; a terminated one is over.
        if let round, round.resumed, record.queue == nil, !record.terminated { refresh(path, round: round) }
    }

    /// Reads a known call again after a resume. Its signals go on being applied meanwhile; the
    /// answer is newer than they are, so it comes last, like any listing of a known call.
    private func refresh(_ path: String, round: SyncRound) {
        guard var record = calls[path] else { return }
        nextFetch &+= 1
        let token = nextFetch
        record.refresh = token
        calls[path] = record
        round.begin()
        link.call(path: path, interface: BusDaemon.propertiesInterface, member: "GetAll",
                  arguments: [.string(ModemManagerBus.call)]) { [weak self] result in
            guard let self else { return }
            defer { self.end(round) }
            guard var record = self.calls[path], record.refresh == token, record.queue == nil else { return }
            record.refresh = 0
            // Failing to read it means it is gone: the listing's end (not listed) or CallDeleted tells.
            guard case .success(let reply) = result, let map = try? reply.decode(PropertyMap.self) else {
                self.calls[path] = record
                return
            }
            var problems: [String] = []
            let properties = ModemManagerCallProperties(map, problems: &problems)
            self.report(problems, on: path)
            let observation = properties.observation(direction: &record.direction)
            if let state = properties.state { record.terminated = state == ModemManagerBus.terminated }
            self.calls[path] = record
            self.onEvent(.learnedOnResume(.callAppeared(self.key(path), modem: record.modem, observation,
                                                        initial: false)))
        }
    }

    private func end(_ round: SyncRound) {
        guard round.end(), self.round === round else { return }
        self.round = nil
        if let failure = round.failure {
            onNotice(.syncFailed(kind, failure))
            return
        }
        // Known before the round, not listed now, and no signal since: gone while we were not looking.
        for path in round.unconfirmed.sorted() where calls[path] != nil && calls[path]?.queue == nil {
            calls.removeValue(forKey: path)
            emit(.callRemoved(key(path), reason: "removed"), resumed: round.resumed)
        }
        onNotice(.synced(kind, modems: round.modems, calls: round.calls))
    }

    // MARK: Calls

    /// Reads a call's properties; what arrives for it meanwhile waits in its queue.
    private func fetch(_ path: String, modem: String, initial: Bool, queued: [ModemManagerCallUpdate],
                       round: SyncRound?) {
        nextFetch &+= 1
        let token = nextFetch
        calls[path] = CallRecord(modem: modem, queue: queued, fetch: token, initial: initial,
                                 resumed: round?.resumed ?? false)
        round?.begin()
        link.call(path: path, interface: BusDaemon.propertiesInterface, member: "GetAll",
                  arguments: [.string(ModemManagerBus.call)]) { [weak self] result in
            guard let self else { return }
            self.fetched(path, token: token, result)
            if let round { self.end(round) }
        }
    }

    private func fetched(_ path: String, token: UInt64, _ result: Result<Message, DBusError>) {
        guard var record = calls[path], record.fetch == token, let queued = record.queue else { return }
        var properties: ModemManagerCallProperties?
        switch result {
        case .success(let reply):
            if let map = try? reply.decode(PropertyMap.self) {
                var problems: [String] = []
                properties = ModemManagerCallProperties(map, problems: &problems)
                report(problems, on: path)
                if properties?.state == nil { report(["no State property"], on: path) }
            } else {
                report(["GetAll answered '\(reply.signature)'"], on: path)
            }
        case .failure(let error):
            // A call deleted before we could read it is no news; anything else is.
            if !record.deleted { onNotice(.callUnreadable(kind, "cannot read call \(path): \(error)")) }
        }
        let replay = ModemManagerCallReplay.replay(key: key(path), modem: record.modem, initial: record.initial,
                                                   fetched: properties, queued: queued)
        var events = replay.events
        let resumed = record.resumed
        if record.deleted || (properties == nil && events.isEmpty) {
            calls.removeValue(forKey: path)
            if record.deleted && !events.isEmpty { events.append(.callRemoved(key(path), reason: "removed")) }
        } else {
            record.queue = nil
            record.direction = replay.direction
            record.terminated = replay.terminated
            record.resumed = false
            calls[path] = record
        }
        for event in events { emit(event, resumed: resumed) }
    }

    /// `learnedOnResume` when the resync after a resume found it.
    private func emit(_ event: BackendEvent, resumed: Bool) {
        onEvent(resumed ? .learnedOnResume(event) : event)
    }

    private func update(_ path: String, _ change: ModemManagerCallUpdate) {
        guard var record = calls[path] else {
            // Its CallAdded came before our sync could list it.
            fetch(path, modem: "", initial: false, queued: [change], round: nil)
            return
        }
        if var queue = record.queue {
            // An owner that floods a call it never answers for must not grow memory: keep the
            // first change (it places the call) and the newest; the read's answer is the truth anyway.
            if queue.count >= Self.maxQueued { queue.remove(at: 1) }
            queue.append(change)
            record.queue = queue
            calls[path] = record
            return
        }
        let observation = change.observation(direction: &record.direction)
        if let state = change.newState { record.terminated = state == ModemManagerBus.terminated }
        calls[path] = record
        onEvent(.callChanged(key(path), observation))
    }

    private func key(_ path: String) -> CallKey { CallKey(backend: kind, path: path) }

    private func modemGone(_ modem: String, resumed: Bool = false) {
        modems.remove(modem)
        for (path, record) in calls where record.modem == modem { calls.removeValue(forKey: path) }
        emit(.modemRemoved(kind, modem: modem), resumed: resumed)
    }

    // MARK: Signals

    private func objectManagerSignal(_ message: Message) {
        switch message.member {
        case "InterfacesAdded":
            guard let (path, interfaces) = try? message.decode(ObjectPath.self, [String: PropertyMap].self) else {
                return malformed(message)
            }
            decodedSignals &+= 1
            guard interfaces[ModemManagerBus.voice] != nil, !modems.contains(path.rawValue) else { return }
            modems.insert(path.rawValue)
            listCalls(path.rawValue, round: nil)
        case "InterfacesRemoved":
            guard let (path, interfaces) = try? message.decode(ObjectPath.self, [String].self) else {
                return malformed(message)
            }
            decodedSignals &+= 1
            if interfaces.contains(ModemManagerBus.voice), modems.contains(path.rawValue) { modemGone(path.rawValue) }
        default:
            break
        }
    }

    private func voiceSignal(_ message: Message) {
        guard let modem = message.path else { return }
        switch message.member {
        case "CallAdded":
            guard let object = try? message.decode(ObjectPath.self) else { return malformed(message) }
            let path = object.rawValue
            decodedSignals &+= 1
            modems.insert(modem)
            round?.unconfirmed.remove(path)
            if var record = calls[path], record.queue != nil || !record.terminated {
                // Already being read or followed (a signal or a listing got there first).
                if record.modem.isEmpty {
                    record.modem = modem
                    calls[path] = record
                    if record.queue == nil {
                        onEvent(.callAppeared(key(path), modem: modem, CallObservation(), initial: false))
                    }
                }
                return
            }
            // New, or a terminated call's path used again: a new call either way.
            fetch(path, modem: modem, initial: false, queued: [], round: nil)
        case "CallDeleted":
            guard let object = try? message.decode(ObjectPath.self) else { return malformed(message) }
            let path = object.rawValue
            decodedSignals &+= 1
            guard var record = calls[path] else { return }
            if record.queue != nil {
                record.deleted = true
                calls[path] = record
            } else {
                calls.removeValue(forKey: path)
                onEvent(.callRemoved(key(path), reason: "removed"))
            }
        default:
            break
        }
    }

    private func stateChanged(_ message: Message) {
        guard let path = message.path, let (old, new, reason) = try? message.decode(Int32.self, Int32.self, UInt32.self)
        else { return malformed(message) }
        decodedSignals &+= 1
        if !ModemManagerBus.knownStates.contains(new) { report(["unknown call state \(new)"], on: path) }
        update(path, .stateChanged(old: old, new: new, reason: reason))
    }

    private func propertiesChanged(_ message: Message) {
        guard let path = message.path,
              let (interface, changed, _) = try? message.decode(String.self, PropertyMap.self, [String].self)
        else { return malformed(message) }
        decodedSignals &+= 1
        guard interface == ModemManagerBus.call else { return }
        var problems: [String] = []
        let properties = ModemManagerCallProperties(changed, problems: &problems)
        // StateChanged already reported an unknown state; say it once.
        report(problems.filter { !$0.hasPrefix("unknown call state") }, on: path)
        guard !properties.isEmpty else { return }
        update(path, .properties(properties))
    }

    // MARK: Notices

    private func malformed(_ message: Message) { link.reportMalformed(message) }

    private func report(_ problems: [String], on path: String) { link.report(problems, on: path) }
}
