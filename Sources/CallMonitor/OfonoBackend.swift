// oFono (docs/modem-stacks.md §3): modems from org.ofono.Manager, calls from each modem's
// VoiceCallManager, call state from org.ofono.VoiceCall signals.

import DBus

/// Follows `org.ofono`.
public final class OfonoBackend: LinkedBackend {
    public private(set) var decodedSignals: UInt64 = 0

    private let output: BackendOutput
    let link: ServiceLink
    static var callInterface: String { OfonoBus.voiceCall }
    /// Every modem heard of: whether it has a VoiceCallManager now.
    private(set) var modems: [String: Bool] = [:]
    /// The count of voice modems as last said (by a sync's listing, then by `.modemsChanged`);
    /// nil until a sync has listed them.
    private var saidModems: Int?
    /// What each modem is (docs/modem-stacks.md §11): its `Serial`, from the same listing and signals.
    private var identities = ModemIdentityBook()
    /// Every call heard of: its modem (unknown when only its own signals named it).
    private var calls: [String: ModemPath] = [:]

    public init(connection: Connection, onEvent: @escaping (BackendEvent) -> Void,
                onNotice: @escaping (BackendNotice) -> Void) {
        output = BackendOutput(kind: .ofono, onEvent: onEvent, onNotice: onNotice)
        link = ServiceLink(output: output, connection: connection, policyMayRefuse: true)
    }

    func subscribe() {
        link.subscribe(path: "/", interface: OfonoBus.manager) { [weak self] in self?.managerSignal($0) }
        link.subscribe(interface: OfonoBus.modem, member: "PropertyChanged", arguments: [0: "Interfaces"]) {
            [weak self] in self?.modemInterfacesChanged($0)
        }
        link.subscribe(interface: OfonoBus.modem, member: "PropertyChanged", arguments: [0: "Serial"]) {
            [weak self] in self?.modemSerialChanged($0)
        }
        link.subscribe(interface: OfonoBus.voiceCallManager) { [weak self] in self?.voiceCallManagerSignal($0) }
        link.subscribe(interface: OfonoBus.voiceCall) { [weak self] in self?.voiceCallSignal($0) }
    }

    // MARK: Sync

    var followedCalls: [String] { Array(calls.keys) }

    func forgetAll() {
        modems.removeAll()
        saidModems = nil
        identities.removeAll()
        calls.removeAll()
    }

    /// oFono forgets a call the moment it ends, so a call that came and went while the system
    /// slept leaves nothing for the round after a resume to find.
    func sync(_ round: SyncRound) {
        link.list([PathProperties].self, path: "/", interface: OfonoBus.manager, member: "GetModems", round: round) {
            [weak self] entries in self?.listed(modems: entries, round: round)
        }
    }

    /// oFono gives no reason of its own: the tracker keeps any DisconnectReason it was told.
    func unconfirmedGone(_ path: String) -> BackendEvent? {
        guard calls.removeValue(forKey: path) != nil else { return nil }
        return .callRemoved(output.key(path), reason: nil)
    }

    private func listed(modems entries: [PathProperties], round: SyncRound) {
        var voiceModems: [String] = []
        var present: Set<String> = []
        for entry in entries {
            let modem = entry.path.rawValue
            present.insert(modem)
            let voice = hasVoice(entry.properties["Interfaces"], modem: modem) ?? false
            if modems[modem] == true && !voice { modemLost(modem, resumed: round.resumed) }
            modems[modem] = voice
            identify(modem, entry.properties, voice: voice)
            if voice { voiceModems.append(modem) }
        }
        identities.keep(present)
        for (modem, _) in modems where !present.contains(modem) {
            modems.removeValue(forKey: modem)
            modemLost(modem, resumed: round.resumed)
        }
        round.modems = voiceModems.count
        saidModems = voiceModems.count
        for modem in voiceModems {
            listCalls(modem, round: round)
            readEmergencyNumbers(modem, round: round)
        }
    }

    /// Whether an `Interfaces` value lists the VoiceCallManager; nil (and a notice) when unusable.
    private func hasVoice(_ interfaces: Variant?, modem: String) -> Bool? {
        guard let voice = OfonoBus.hasVoice(interfaces) else {
            let signature = interfaces.map { "\($0.value.signature)" } ?? "?"
            output.notice(.malformed(kind, "modem \(CallText.clip(modem)): Interfaces is '\(signature)'"))
            return nil
        }
        return voice
    }

    private func listCalls(_ modem: String, round: SyncRound?) {
        link.list([PathProperties].self, path: modem, interface: OfonoBus.voiceCallManager, member: "GetCalls",
                  what: "GetCalls on \(modem)", round: round,
                  stillWanted: { [weak self] in self?.modems[modem] == true }) { [weak self] entries in
            round?.found(entries.map(\.path.rawValue))
            for entry in entries {
                // Only a sync's listing finds calls that were live before we looked; a modem
                // that appears later lists calls as they come.
                self?.callAppeared(entry.path.rawValue, modem: modem, entry.properties, initial: round != nil,
                                   resumed: round?.resumed ?? false)
            }
        }
    }

    // MARK: Calls

    private func callAppeared(_ path: String, modem: String, _ map: PropertyMap, initial: Bool,
                              resumed: Bool = false) {
        var problems: [String] = []
        let properties = OfonoCallProperties(map, problems: &problems)
        if properties.state == nil && map["State"] == nil { problems.append("no State property") }
        output.report(problems, on: path)
        calls[path] = .path(modem)
        // A call already followed (its CallAdded beat the listing) is updated, not started again.
        output.emit(.callAppeared(output.key(path), modem: modem, properties.observation, initial: initial),
                    resumed: resumed)
    }

    /// The modem's calls end (`modem-removed`). Calls known only from their own signals have no
    /// modem; oFono names calls `<modem>/voicecallNN`, so those under the modem go too.
    private func modemLost(_ modem: String, resumed: Bool = false) {
        identities.untold(modem)
        let prefix = modem + "/"
        var orphans: [String] = []
        for (path, callModem) in calls
        where callModem == .path(modem) || (!callModem.isKnown && path.hasPrefix(prefix)) {
            calls.removeValue(forKey: path)
            if !callModem.isKnown { orphans.append(path) }
        }
        output.emit(.modemRemoved(kind, modem: modem), resumed: resumed)
        for path in orphans.sorted() {
            output.emit(.callRemoved(output.key(path), reason: .modemRemoved), resumed: resumed)
        }
    }

    /// A modem that comes or goes after the sync is counted: the sync's count alone would say
    /// "0 voice modems" while a modem that appeared later rings.
    private func modemsCounted() {
        let count = modems.values.filter { $0 }.count
        guard let said = saidModems, said != count else { return }
        saidModems = count
        output.notice(.modemsChanged(kind, modems: count))
    }

    // MARK: Signals

    private func managerSignal(_ message: Message) {
        switch message.member {
        case "ModemAdded":
            guard let (path, properties) = try? message.decode(ObjectPath.self, PropertyMap.self) else {
                return output.malformed(message)
            }
            decodedSignals &+= 1
            let modem = path.rawValue
            let voice = hasVoice(properties["Interfaces"], modem: modem) ?? false
            let before = modems[modem] ?? false
            modems[modem] = voice
            identify(modem, properties, voice: voice)
            modemsCounted()
            if voice && !before { listCalls(modem, round: nil) }
        case "ModemRemoved":
            guard let path = try? message.decode(ObjectPath.self) else { return output.malformed(message) }
            decodedSignals &+= 1
            let modem = path.rawValue
            if modems.removeValue(forKey: modem) == true || calls.values.contains(.path(modem)) { modemLost(modem) }
            identities.forget(modem)
            modemsCounted()
        default:
            break
        }
    }

    private func modemInterfacesChanged(_ message: Message) {
        guard let modem = message.path, let (_, value) = try? message.decode(String.self, Variant.self) else {
            return output.malformed(message)
        }
        decodedSignals &+= 1
        guard let voice = hasVoice(value, modem: modem) else { return }
        let before = modems[modem] ?? false
        modems[modem] = voice
        modemsCounted()
        if voice && !before {
            if let identity = identities.toTell(modem) { output.emit(.modemIdentified(kind, modem: modem, identity)) }
            listCalls(modem, round: nil)
            readEmergencyNumbers(modem)
        } else if !voice && (before || calls.values.contains(.path(modem))) {
            modemLost(modem)
        }
    }

    /// A modem's identity from its properties (GetModems, ModemAdded); told before its calls are
    /// listed, so that they carry it from their first event.
    private func identify(_ modem: String, _ properties: PropertyMap, voice: Bool) {
        var problems: [String] = []
        let change = OfonoIdentity.change(properties, problems: &problems)
        output.report(problems, on: modem, object: "modem")
        if let identity = identities.apply(change, modem: modem, voice: voice) {
            output.emit(.modemIdentified(kind, modem: modem, identity))
        }
    }

    /// `VoiceCallManager.EmergencyNumbers` (`as`: oFono's list, the SIM's and the network's with
    /// its defaults), for call screening (docs/screening.md); after that, its `PropertyChanged`.
    /// In a sync, part of its round: known before it says synced. An error leaves the common
    /// numbers alone, as a modem without the property does.
    private func readEmergencyNumbers(_ modem: String, round: SyncRound? = nil) {
        link.call(path: modem, interface: OfonoBus.voiceCallManager, member: "GetProperties", round: round) {
            [weak self] result in
            guard let self, self.modems[modem] == true, case .success(let reply) = result else { return }
            guard let properties = try? reply.decode(PropertyMap.self) else {
                return self.output.report(["GetProperties answered '\(reply.signature)'"], on: modem, object: "modem")
            }
            guard let value = properties["EmergencyNumbers"] else { return }
            self.emergencyNumbers(value, modem: modem)
        }
    }

    private func emergencyNumbers(_ value: Variant, modem: String) {
        guard let numbers = StackEmergencyNumbers.parse(value.value) else {
            return output.report(["EmergencyNumbers is not a list of strings"], on: modem, object: "modem")
        }
        output.notice(.emergencyNumbers(kind, modem: modem, numbers))
    }

    private func modemSerialChanged(_ message: Message) {
        guard let modem = message.path, let (name, value) = try? message.decode(String.self, Variant.self) else {
            return output.malformed(message)
        }
        decodedSignals &+= 1
        identify(modem, [name: value], voice: modems[modem] == true)
    }

    private func voiceCallManagerSignal(_ message: Message) {
        guard let modem = message.path else { return }
        switch message.member {
        case "CallAdded":
            guard let (path, properties) = try? message.decode(ObjectPath.self, PropertyMap.self) else {
                return output.malformed(message)
            }
            decodedSignals &+= 1
            link.confirm(path.rawValue)
            callAppeared(path.rawValue, modem: modem, properties, initial: false)
        case "PropertyChanged":
            guard let (name, value) = try? message.decode(String.self, Variant.self) else { return output.malformed(message) }
            decodedSignals &+= 1
            if name == "EmergencyNumbers" { emergencyNumbers(value, modem: modem) }
        case "CallRemoved":
            guard let object = try? message.decode(ObjectPath.self) else { return output.malformed(message) }
            let path = object.rawValue
            decodedSignals &+= 1
            calls.removeValue(forKey: path)
            // No reason of its own: the tracker keeps the DisconnectReason it was told, if any.
            output.emit(.callRemoved(output.key(path), reason: nil))
        default:
            break
        }
    }

    private func voiceCallSignal(_ message: Message) {
        guard let path = message.path else { return }
        switch message.member {
        case "PropertyChanged":
            guard let (name, value) = try? message.decode(String.self, Variant.self) else {
                return output.malformed(message)
            }
            decodedSignals &+= 1
            var properties = OfonoCallProperties()
            var problems: [String] = []
            properties.apply(name, value.value, problems: &problems)
            output.report(problems, on: path)
            guard properties != OfonoCallProperties() else { return }
            let observation = properties.observation
            if calls[path] == nil, case .live? = observation.phase {
                // Seen first through its own signal (sync refused, or a change racing the listing).
                calls[path] = .unknown
            }
            output.emit(.callChanged(output.key(path), observation))
        case "DisconnectReason":
            guard let reason = try? message.decode(String.self) else { return output.malformed(message) }
            decodedSignals &+= 1
            guard CallText.fits(reason) else {
                return output.report(["DisconnectReason of \(reason.utf8.count) bytes"], on: path)
            }
            output.emit(.callChanged(output.key(path), CallObservation(reason: OfonoMapping.disconnectReason(reason))))
        default:
            break
        }
    }
}
