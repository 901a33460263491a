// ModemManager (docs/modem-stacks.md §2): modems through the ObjectManager, calls through Modem.Voice,
// call state through Call.StateChanged and PropertiesChanged, tones heard through Call.DtmfReceived (§14).

import DBus

typealias ModemManagerStateValue = ModemManagerValue<ModemManagerCallState>
typealias ModemManagerReasonValue = ModemManagerValue<ModemManagerCallStateReason>

/// Follows `org.freedesktop.ModemManager1`.
public final class ModemManagerBackend: LinkedBackend {
    public private(set) var decodedSignals: UInt64 = 0

    private struct CallRecord {
        /// Unknown until a listing or CallAdded names it (a signal can beat both during a sync).
        var modem: ModemPath
        var read: ModemManagerCallRead
    }

    /// Changes kept per call while its properties are being read.
    static let maxQueued = 64

    private let output: BackendOutput
    let link: ServiceLink
    static var callInterface: String { ModemManagerBus.call }
    /// Modems with Modem.Voice: the only ones whose calls can be listed.
    private(set) var voiceModems: Set<String> = []
    /// The count of voice modems as last said (by a sync's listing, then by `.modemsChanged`);
    /// nil until a sync has listed them.
    private var saidModems: Int?
    /// What each modem is (docs/modem-stacks.md §11): read from the same listing and signals.
    private var identities = ModemIdentityBook()
    /// Each modem's SIM (`Modem.Sim`) whose `EmergencyNumbers` was asked for.
    private var sims: [String: String] = [:]
    private var calls: [String: CallRecord] = [:]
    private var nextFetch: UInt64 = 0

    public init(connection: Connection, onEvent: @escaping (BackendEvent) -> Void,
                onNotice: @escaping (BackendNotice) -> Void) {
        output = BackendOutput(kind: .modemManager, onEvent: onEvent, onNotice: onNotice)
        link = ServiceLink(output: output, connection: connection)
    }

    func subscribe() {
        link.subscribe(path: ModemManagerBus.root, interface: BusDaemon.objectManagerInterface) { [weak self] in
            self?.objectManagerSignal($0)
        }
        link.subscribe(interface: ModemManagerBus.voice) { [weak self] in self?.voiceSignal($0) }
        link.subscribe(interface: ModemManagerBus.call, member: "StateChanged") { [weak self] in
            self?.stateChanged($0)
        }
        link.subscribe(interface: BusDaemon.propertiesInterface, member: "PropertiesChanged",
                       arguments: [0: ModemManagerBus.call]) { [weak self] in self?.propertiesChanged($0) }
        link.subscribe(interface: ModemManagerBus.call, member: "DtmfReceived") { [weak self] in
            self?.tonesReceived($0)
        }
        for interface in [ModemManagerIdentity.modem, ModemManagerIdentity.modem3gpp] {
            link.subscribe(interface: BusDaemon.propertiesInterface, member: "PropertiesChanged",
                           arguments: [0: interface]) { [weak self] in self?.modemPropertiesChanged($0) }
        }
    }

    // MARK: Sync

    var followedCalls: [String] { Array(calls.keys) }

    func forgetAll() {
        voiceModems.removeAll()
        saidModems = nil
        identities.removeAll()
        sims.removeAll()
        calls.removeAll()
    }

    /// After a resume the round also reads every known live call again (a change while the system
    /// slept has no signal telwatch saw); a terminated call it finds that was never seen came and
    /// went meanwhile.
    func sync(_ round: SyncRound) {
        link.list([ObjectPath: [String: PropertyMap]].self, path: ModemManagerBus.root,
                  interface: BusDaemon.objectManagerInterface, member: "GetManagedObjects", round: round) {
            [weak self] objects in self?.listed(modems: objects, round: round)
        }
    }

    /// A call still being read is not gone: its read decides.
    func unconfirmedGone(_ path: String) -> BackendEvent? {
        guard let record = calls[path], !record.read.isFirstReadOut else { return nil }
        calls.removeValue(forKey: path)
        return .callRemoved(output.key(path), reason: .removed)
    }

    private func listed(modems objects: [ObjectPath: [String: PropertyMap]], round: SyncRound) {
        let withVoice = Set(objects.filter { $0.value[ModemManagerBus.voice] != nil }.map(\.key.rawValue))
        for modem in voiceModems.subtracting(withVoice).sorted() { modemGone(modem, resumed: round.resumed) }
        identities.keep(Set(objects.keys.map(\.rawValue)))
        for (path, interfaces) in objects.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            identify(path.rawValue, interfaces, voice: withVoice.contains(path.rawValue), round: round)
        }
        round.modems = withVoice.count
        saidModems = withVoice.count
        for modem in withVoice.sorted() {
            voiceModems.insert(modem)
            listCalls(modem, round: round)
        }
    }

    private func listCalls(_ modem: String, round: SyncRound?) {
        link.list([ObjectPath].self, path: modem, interface: ModemManagerBus.voice, member: "ListCalls",
                  what: "ListCalls on \(modem)", round: round,
                  stillWanted: { [weak self] in self?.voiceModems.contains(modem) == true }) { [weak self] objects in
            let paths = objects.map(\.rawValue)
            round?.found(paths)
            for path in paths { self?.callListed(path, modem: modem, round: round) }
        }
    }

    private func callListed(_ path: String, modem: String, round: SyncRound?) {
        guard var record = calls[path] else {
            // Only a sync's listing finds calls that were live before we looked.
            fetch(path, modem: .path(modem), queued: [], round: round)
            return
        }
        if !record.modem.isKnown {
            record.modem = .path(modem)
            calls[path] = record
            // A call first seen through a signal: tell the tracker which modem it is on.
            if record.read.isFollowedLive {
                output.emit(.callAppeared(output.key(path), modem: modem, CallObservation(), initial: false))
            }
        }
        // After a resume a live call may have changed unseen; a terminated one is over.
        if let round, round.resumed, record.read.isFollowedLive { refresh(path, round: round) }
    }

    /// Reads a known call again after a resume. Its signals go on being applied meanwhile; the
    /// answer is newer than they are, so it comes last, like any listing of a known call.
    private func refresh(_ path: String, round: SyncRound) {
        guard let followed = calls[path]?.read.followed else { return }
        nextFetch &+= 1
        let token = nextFetch
        calls[path]?.read = .refreshing(followed, token: token)
        readProperties(path, round: round) { [weak self] in self?.refreshed(path, token: token, $0) }
    }

    private func refreshed(_ path: String, token: UInt64, _ result: Result<Message, DBusError>) {
        guard let record = calls[path], case .refreshing(var followed, token) = record.read else { return }
        calls[path]?.read = .followed(followed)
        // Failing to read it means it is gone: the listing's end (not listed) or CallDeleted tells.
        let reply: Message
        switch result {
        case .success(let answer): reply = answer
        case .failure: return
        }
        var problems: [String] = []
        guard let properties = ModemManagerCallProperties(getAllAnswer: reply, problems: &problems) else {
            return output.report(["GetAll answered '\(reply.signature)'"], on: path)
        }
        output.report(problems, on: path)
        let observation = properties.observation(direction: &followed.direction)
        if let state = properties.state { followed.terminated = state.known == .terminated }
        calls[path]?.read = .followed(followed)
        output.emit(.callAppeared(output.key(path), modem: record.modem.eventValue, observation, initial: false),
                    resumed: true)
    }

    // MARK: Calls

    /// Reads a call's properties; what arrives for it meanwhile waits in its queue. A call that a
    /// signal brought (not a sync's listing) is a ring: its read goes first, and an answer that
    /// comes after the read's timeout still reports it. A CallAdded also announces it, so that the
    /// run starts before the read is answered (docs/modem-stacks.md §2.3).
    private func fetch(_ path: String, modem: ModemPath, queued: [ModemManagerCallUpdate],
                       round: SyncRound?, announce: Bool = false) {
        nextFetch &+= 1
        let token = nextFetch
        let firstRead = ModemManagerCallRead.FirstRead(token: token, queue: queued)
        calls[path] = CallRecord(modem: modem, read: round.map { .syncRead(firstRead, resumed: $0.resumed) }
                                     ?? .ringRead(firstRead, announced: announce))
        let read: (Result<Message, DBusError>) -> Void = { [weak self] in self?.fetched(path, token: token, $0) }
        if round == nil {
            link.call(path: path, interface: BusDaemon.propertiesInterface, member: "GetAll",
                      arguments: [.string(ModemManagerBus.call)], priority: .urgent, late: read, reply: read)
        } else {
            readProperties(path, round: round, read)
        }
        // After the read is on its way: the run it starts (the lock request, the record) costs
        // the ring nothing while the stack answers.
        if announce { output.emit(.callAnnounced(output.key(path), modem: modem.eventValue)) }
    }

    private func readProperties(_ path: String, round: SyncRound?,
                                _ reply: @escaping (Result<Message, DBusError>) -> Void) {
        link.call(path: path, interface: BusDaemon.propertiesInterface, member: "GetAll",
                  arguments: [.string(ModemManagerBus.call)], round: round, reply: reply)
    }

    private func fetched(_ path: String, token: UInt64, _ result: Result<Message, DBusError>) {
        guard let record = calls[path], record.read.firstRead?.token == token else { return }
        if case .failure(.timedOut) = result, case .ringRead(let read, let announced) = record.read {
            // Its answer may still come (a stack busy for a while): the call stays what it was,
            // announced and holding the run, until it does or the call or its stack goes.
            calls[path]?.read = .ringOverdue(read, announced: announced)
            output.notice(.callUnreadable(kind, "call \(path) has not answered yet; still waiting for it"))
            return
        }
        var properties: ModemManagerCallProperties?
        switch result {
        case .success(let reply):
            var problems: [String] = []
            if let read = ModemManagerCallProperties(getAllAnswer: reply, problems: &problems) {
                properties = read
                output.report(problems, on: path)
                if properties?.state == nil { output.report(["no State property"], on: path) }
            } else {
                output.report(["GetAll answered '\(reply.signature)'"], on: path)
            }
        case .failure(let error):
            output.notice(.callUnreadable(kind, "cannot read call \(path): \(error)"))
        }
        settle(path, record, fetched: properties, deleted: false)
    }

    /// A call whose read is over (answered, failed, or moot because the stack deleted the call):
    /// what arrived meanwhile is replayed, the answer last. A deleted call, or one nothing places,
    /// is dropped.
    private func settle(_ path: String, _ record: CallRecord, fetched properties: ModemManagerCallProperties?,
                        deleted: Bool) {
        let replay = ModemManagerCallReplay.replay(key: output.key(path), modem: record.modem.eventValue,
                                                   initial: record.read.isInitial, fetched: properties,
                                                   queued: record.read.firstRead?.queue ?? [])
        var events = replay.events
        let resumed = record.read.isResumed
        if deleted || (properties == nil && events.isEmpty) {
            calls.removeValue(forKey: path)
            if deleted && !events.isEmpty {
                events.append(.callRemoved(output.key(path), reason: .removed))
            }
            // Announced but never a call: the tracker lets the run go.
            if record.read.isAnnounced && events.isEmpty { events.append(.callRemoved(output.key(path), reason: nil)) }
        } else {
            calls[path]?.read = .followed(.init(direction: replay.direction, terminated: replay.terminated))
        }
        for event in events { output.emit(event, resumed: resumed) }
    }

    private func update(_ path: String, _ change: ModemManagerCallUpdate) {
        // Changed in place through its index: a storm's signal hashes its path once, and the
        // record is not copied out and back.
        guard let index = calls.index(forKey: path) else {
            // Its CallAdded came before our sync could list it.
            fetch(path, modem: .unknown, queued: [change], round: nil)
            return
        }
        if calls.values[index].read.enqueue(change, limit: Self.maxQueued) { return }
        let followed = calls.values[index].read.follow { followed in
            if let state = change.newState { followed.terminated = state.known == .terminated }
            switch change {
            case let .stateChanged(_, new, reason): followed.lastStateChange = (new, reason)
            case .properties: followed.lastStateChange = nil
            }
            return change.observation(direction: &followed.direction)
        }
        guard let observation = followed else { return }
        output.emit(.callChanged(output.key(path), observation))
    }

    /// A modem object's identity, from its interfaces as a listing or `InterfacesAdded` has them;
    /// told before its calls are listed, so that they carry it from their first event.
    private func identify(_ modem: String, _ interfaces: [String: PropertyMap], voice: Bool, round: SyncRound? = nil) {
        var problems: [String] = []
        if let change = ModemManagerIdentity.change(interfaces, problems: &problems),
           let identity = identities.apply(change, modem: modem, voice: voice) {
            output.emit(.modemIdentified(kind, modem: modem, identity))
        } else if voice, let identity = identities.toTell(modem) {
            output.emit(.modemIdentified(kind, modem: modem, identity))
        }
        output.report(problems, on: modem, object: "modem")
        if let sim = interfaces[ModemManagerIdentity.modem]?["Sim"]?.value.objectPath?.rawValue {
            readSim(sim, of: modem, round: round)
        }
    }

    /// The SIM's `EmergencyNumbers` (`as`, ModemManager 1.20 and later), read once per SIM a
    /// modem has (a new SIM is a new object): call screening's emergency numbers beyond the
    /// common ones (docs/screening.md). An older ModemManager has no such property: its error
    /// leaves the common numbers alone. In a sync, part of its round: known before it says synced.
    private func readSim(_ sim: String, of modem: String, round: SyncRound? = nil) {
        let earlier = sims[modem]
        guard earlier != sim, earlier != nil || sims.count < ModemIdentityBook.maxModems else { return }
        sims[modem] = sim
        guard sim != "/" else {
            // The SIM was taken out: what it listed no longer counts.
            if let earlier, earlier != "/" { output.notice(.emergencyNumbers(kind, modem: modem, [])) }
            return
        }
        link.call(path: sim, interface: BusDaemon.propertiesInterface, member: "Get",
                  arguments: [.string(ModemManagerBus.sim), .string("EmergencyNumbers")], round: round) {
            [weak self] result in
            guard let self, self.sims[modem] == sim, case .success(let reply) = result else { return }
            guard let value = try? reply.decode(Variant.self), let numbers = StackEmergencyNumbers.parse(value.value) else {
                return self.output.report(["EmergencyNumbers is not a list of strings"], on: sim, object: "SIM")
            }
            self.output.notice(.emergencyNumbers(self.kind, modem: modem, numbers))
        }
    }

    private func modemGone(_ modem: String, resumed: Bool = false) {
        identities.untold(modem)
        voiceModems.remove(modem)
        for (path, record) in calls where record.modem == .path(modem) { calls.removeValue(forKey: path) }
        output.emit(.modemRemoved(kind, modem: modem), resumed: resumed)
    }

    /// A modem that comes or goes after the sync is counted: the sync's count alone would say
    /// "0 voice modems" while a modem that appeared later rings.
    private func modemsCounted() {
        guard let said = saidModems, said != voiceModems.count else { return }
        saidModems = voiceModems.count
        output.notice(.modemsChanged(kind, modems: voiceModems.count))
    }

    // MARK: Signals

    private func objectManagerSignal(_ message: Message) {
        switch message.member {
        case "InterfacesAdded":
            guard let (path, interfaces) = try? message.decode(ObjectPath.self, [String: PropertyMap].self) else {
                return output.malformed(message)
            }
            decodedSignals &+= 1
            let newVoice = interfaces[ModemManagerBus.voice] != nil && !voiceModems.contains(path.rawValue)
            identify(path.rawValue, interfaces, voice: newVoice || voiceModems.contains(path.rawValue))
            guard newVoice else { return }
            voiceModems.insert(path.rawValue)
            modemsCounted()
            listCalls(path.rawValue, round: nil)
        case "InterfacesRemoved":
            guard let (path, interfaces) = try? message.decode(ObjectPath.self, [String].self) else {
                return output.malformed(message)
            }
            decodedSignals &+= 1
            if interfaces.contains(ModemManagerBus.voice), voiceModems.contains(path.rawValue) {
                modemGone(path.rawValue)
                modemsCounted()
            }
            if interfaces.contains(ModemManagerIdentity.modem) {
                identities.forget(path.rawValue)
                sims.removeValue(forKey: path.rawValue)
            }
        default:
            break
        }
    }

    private func voiceSignal(_ message: Message) {
        guard let modem = message.path else { return }
        switch message.member {
        case "CallAdded":
            guard let object = try? message.decode(ObjectPath.self) else { return output.malformed(message) }
            let path = object.rawValue
            decodedSignals &+= 1
            voiceModems.insert(modem)
            modemsCounted()
            link.confirm(path)
            if var record = calls[path], record.read.isFirstReadOut || record.read.isFollowedLive {
                // Already being read or followed (a signal or a listing got there first).
                if !record.modem.isKnown {
                    record.modem = .path(modem)
                    calls[path] = record
                    if !record.read.isFirstReadOut {
                        output.emit(.callAppeared(output.key(path), modem: modem, CallObservation(), initial: false))
                    }
                }
                return
            }
            // New, or a terminated call's path used again: a new call either way.
            fetch(path, modem: .path(modem), queued: [], round: nil, announce: true)
        case "CallDeleted":
            guard let object = try? message.decode(ObjectPath.self) else { return output.malformed(message) }
            let path = object.rawValue
            decodedSignals &+= 1
            guard let record = calls[path] else { return }
            if record.read.isFirstReadOut {
                // Its read is still out. An answer sent before this signal would have arrived
                // first (one sender's messages arrive in order, docs/modem-stacks.md §8), so no
                // answer can tell more about the call than what came meanwhile: it is settled
                // now, and its run does not wait for a read the stack may never answer.
                settle(path, record, fetched: nil, deleted: true)
            } else {
                calls.removeValue(forKey: path)
                output.emit(.callRemoved(output.key(path), reason: .removed))
            }
        default:
            break
        }
    }

    private func stateChanged(_ message: Message) {
        guard let path = message.path, let (old, new, reason) = try? message.decode(Int32.self, Int32.self, UInt32.self)
        else { return output.malformed(message) }
        decodedSignals &+= 1
        let newState = ModemManagerStateValue(raw: new)
        if newState.known == nil { output.report(["unknown call state \(new)"], on: path) }
        update(path, .stateChanged(old: ModemManagerStateValue(raw: old), new: newState, reason: reason))
    }

    /// `DtmfReceived(s)`: what the far end pressed (docs/modem-stacks.md §14), decoded here; the
    /// monitor finds its call and paces it. A signal without a single tone is said, never shown.
    private func tonesReceived(_ message: Message) {
        guard let path = message.path, let raw = try? message.decode(String.self) else { return output.malformed(message) }
        decodedSignals &+= 1
        let (tones, dropped) = ModemManagerTones.decode(raw)
        guard !tones.isEmpty else { return output.report(["DtmfReceived without a tone (\(dropped) characters)"], on: path) }
        output.emit(.tonesHeard(output.key(path), tones: tones, dropped: dropped))
    }

    /// A modem's `PropertiesChanged` (Modem, Modem3gpp): ModemManager sends these often (signal
    /// quality, every few seconds while registered), so only the identity's names are decoded.
    private func modemPropertiesChanged(_ message: Message) {
        guard let modem = message.path, message.hasSignature("sa{sv}as") else { return output.malformed(message) }
        var reader = message.reader()
        var change = ModemIdentityChange()
        var problems: [String] = []
        var sim: String?
        do {
            let interface = try reader.read(String.self)
            decodedSignals &+= 1
            try reader.readProperties { name, value in
                if interface == ModemManagerIdentity.modem && name == "Sim" {
                    sim = try value.readValue().objectPath?.rawValue
                    return
                }
                guard ModemManagerIdentity.isUsed(interface, name) else { return }
                ModemManagerIdentity.apply(interface, name, try value.readValue(), to: &change, problems: &problems)
            }
        } catch {
            return output.malformed(message)
        }
        output.report(problems, on: modem, object: "modem")
        if let sim { readSim(sim, of: modem) }
        guard !change.isEmpty,
              let identity = identities.apply(change, modem: modem, voice: voiceModems.contains(modem)) else { return }
        output.emit(.modemIdentified(kind, modem: modem, identity))
    }

    /// Read in place: only the properties telwatch uses are decoded, and no dictionary is built
    /// (this runs for half of a storm's signals).
    private func propertiesChanged(_ message: Message) {
        guard let path = message.path, message.hasSignature("sa{sv}as") else { return output.malformed(message) }
        var properties = ModemManagerCallProperties()
        var problems: [String] = []
        func take(_ name: String, _ value: DBusValue) {
            guard ModemManagerCallProperties.isUsed(name) else { return }
            properties.apply(name, value, problems: &problems)
        }
        // From the message's bytes where they hold only basic values, else through libdbus's
        // iterators; the invalidated names that follow are not used either way.
        switch ChangedProperties.read(message, interface: ModemManagerBus.callInterface, take) {
        case .read:
            decodedSignals &+= 1
        case .otherInterface:
            decodedSignals &+= 1
            return
        case .unreadable:
            do {
                guard var reader = message.reader(checked: "sa{sv}as") else { return output.malformed(message) }
                let isCall = try reader.readString(equals: ModemManagerBus.call)
                decodedSignals &+= 1
                guard isCall else { return }
                try reader.readProperties(last: true) { name, value in take(name, try value.readValue()) }
            } catch {
                return output.malformed(message)
            }
        }
        // The state and reason a StateChanged of the same call just told: no news.
        if let told = calls[path]?.read.followed?.lastStateChange, properties.repeats(told) { return }
        // StateChanged already reported an unknown state; say it once.
        output.report(problems.filter { !$0.hasPrefix("unknown call state") }, on: path)
        guard !properties.isEmpty else { return }
        update(path, .properties(properties))
    }
}
