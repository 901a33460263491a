// Fuzz target: D-Bus messages as ModemManager, oFono and logind send them to telwatch.
//
// The input is a whole marshalled message. libdbus demarshals and validates it exactly as the
// bus hands telwatch a message; it is then routed by interface and member as the backends route
// their subscriptions, and decoded with the same calls their handlers make (the handlers are
// private methods of backends that need a live bus; this reaches the same decoding and mapping
// code, then the tracker). A method return goes through every listing reply telwatch reads and
// logind's answer to `Inhibit`.
// Checked besides "no crash, no sanitizer finding": whatever decodes re-encodes to the same
// values (the codec round trip).

import BGRunManager
@testable import CallMonitor
import DBus

private let voice = "org.freedesktop.ModemManager1.Modem.Voice"
private let mmCall = "org.freedesktop.ModemManager1.Call"
private let properties = "org.freedesktop.DBus.Properties"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let message = try? Message(marshalled: Array(UnsafeBufferPointer(start: data, count: size))) else {
        return 0
    }
    var events: [BackendEvent] = []
    let path = message.path ?? "/c"
    switch (message.type, message.interface, message.member) {
    case (_, voice?, "CallAdded"?), (_, voice?, "CallDeleted"?), (_, "org.ofono.VoiceCallManager"?, "CallRemoved"?),
         (_, "org.ofono.Manager"?, "ModemRemoved"?):
        if let object = try? message.decode(ObjectPath.self) { _ = object.rawValue }
    case (_, mmCall?, "StateChanged"?):
        if let (old, new, reason) = try? message.decode(Int32.self, Int32.self, UInt32.self) {
            let update = ModemManagerCallUpdate.stateChanged(old: ModemManagerStateValue(raw: old),
                                                             new: ModemManagerStateValue(raw: new), reason: reason)
            events += replay(path, queued: [update], fetched: nil)
        }
    case (_, properties?, "PropertiesChanged"?):
        if let changed = modemManagerPropertiesChanged(message) {
            events += replay(path, queued: [.properties(changed)], fetched: nil)
        }
    case (_, "org.freedesktop.DBus.ObjectManager"?, "InterfacesAdded"?):
        if let (_, interfaces) = try? message.decode(ObjectPath.self, [String: PropertyMap].self) {
            _ = interfaces[voice] != nil
        }
    case (_, "org.ofono.VoiceCallManager"?, "CallAdded"?), (_, "org.ofono.Manager"?, "ModemAdded"?):
        if let (object, map) = try? message.decode(ObjectPath.self, PropertyMap.self) {
            events.append(ofonoCall(object.rawValue, map))
            _ = OfonoBus.hasVoice(map["Interfaces"])
        }
    case (_, "org.ofono.VoiceCall"?, "PropertyChanged"?), (_, "org.ofono.Modem"?, "PropertyChanged"?):
        if let (name, value) = try? message.decode(String.self, Variant.self) {
            var changed = OfonoCallProperties()
            var problems: [String] = []
            changed.apply(name, value.value, problems: &problems)
            _ = OfonoBus.hasVoice(value)
            events.append(.callChanged(CallKey(backend: .ofono, path: path), changed.observation))
        }
    case (_, "org.ofono.VoiceCall"?, "DisconnectReason"?):
        if let reason = try? message.decode(String.self), CallText.fits(reason) {
            let said = CallObservation(reason: OfonoMapping.disconnectReason(reason))
            events.append(.callChanged(CallKey(backend: .ofono, path: path), said))
        }
    case (_, InhibitorLock.interface?, SleepWatcher.member?):
        // As `SleepWatcher` reads it: one boolean, or a malformed one told by its signature.
        if (try? message.decode(Bool.self)) == nil { _ = String(message.signature.prefix(40)) }
    case (.methodReturn, _, _):
        events += listingReplies(message)
        // `InhibitorLock`: the reply to `Inhibit` is the lock's descriptor (closed with `lock`).
        if let lock = try? message.decode(UnixFD.self) { _ = lock.isOpen }
    default:
        break
    }
    var tracker = CallTracker(makeID: { "id" })
    var time = 0.0
    for event in events + [.backendLost(.modemManager), .backendLost(.ofono)] {
        time += 1
        _ = tracker.apply(event, at: time)
    }
    precondition(tracker.liveCount == 0, "a call outlived its stack")
    checkRoundTrip(message)
    return 0
}

/// As `ModemManagerBackend.propertiesChanged` reads one: in place, only the properties used,
/// from the message's bytes or through libdbus's iterators. Checked besides: where the bytes are
/// read, they say what the iterators say.
private func modemManagerPropertiesChanged(_ message: Message) -> ModemManagerCallProperties? {
    guard var reader = message.reader(checked: "sa{sv}as") else { return nil }
    var changed = ModemManagerCallProperties()
    var problems: [String] = []
    var fromBytes: [(String, DBusValue)] = []
    let read = ChangedProperties.read(message, interface: ModemManagerBus.callInterface) { fromBytes.append(($0, $1)) }
    var iterated: [(String, DBusValue)] = []
    do {
        let isCall = try reader.read(String.self) == mmCall
        // Bytes left to the iterators (the other byte order) say nothing of the interface.
        precondition(read == .unreadable || isCall == (read == .read),
                     "the bytes and the iterators disagree on the interface")
        guard isCall else { return nil }
        try reader.readProperties(last: true) { name, value in
            let value = try value.readValue()
            iterated.append((name, value))
            guard ModemManagerCallProperties.isUsed(name) else { return }
            changed.apply(name, value, problems: &problems)
        }
    } catch {
        precondition(read != .read, "the bytes were read where the iterators fail")
        return nil
    }
    if read == .read {
        precondition(fromBytes.map(\.0) == iterated.map(\.0) && "\(fromBytes.map(\.1))" == "\(iterated.map(\.1))",
                     "the bytes and the iterators read different properties")
    }
    return changed
}

/// GetAll of a ModemManager call, GetManagedObjects, oFono's GetCalls and GetModems.
private func listingReplies(_ reply: Message) -> [BackendEvent] {
    var events: [BackendEvent] = []
    var problems: [String] = []
    if let fetched = ModemManagerCallProperties(getAllAnswer: reply, problems: &problems) {
        events += replay("/c", queued: [], fetched: fetched)
    }
    if let objects = try? reply.decode([ObjectPath: [String: PropertyMap]].self) {
        _ = objects.filter { $0.value[voice] != nil }.map(\.key.rawValue)
    }
    if let entries = try? reply.decode([PathProperties].self) {
        for entry in entries {
            events.append(ofonoCall(entry.path.rawValue, entry.properties))
            _ = OfonoBus.hasVoice(entry.properties["Interfaces"])
        }
    }
    return events
}

private func replay(_ path: String, queued: [ModemManagerCallUpdate],
                    fetched: ModemManagerCallProperties?) -> [BackendEvent] {
    ModemManagerCallReplay.replay(key: CallKey(backend: .modemManager, path: path), modem: "/m", initial: false,
                                  fetched: fetched, queued: queued).events
}

private func ofonoCall(_ path: String, _ map: PropertyMap) -> BackendEvent {
    var problems: [String] = []
    let call = OfonoCallProperties(map, problems: &problems)
    return .callAppeared(CallKey(backend: .ofono, path: path), modem: "/m", call.observation, initial: false)
}

/// Values read from a message, written into a new one and read back, are the same values.
/// Messages with Unix fds (also inside variants) are left out: a demarshalled message carries
/// no fds, so its fd values are closed ones, which cannot be written.
private func checkRoundTrip(_ message: Message) {
    guard let values = try? message.values(), !values.contains(where: carriesFD),
          let copy = try? Message.signal(path: ObjectPath("/r"), interface: "r.R", member: "R")
    else { return }
    do {
        try copy.append(values: values)
    } catch {
        preconditionFailure("values read from a message cannot be written again: \(error)")
    }
    let again = try? Message(marshalled: copy.marshal()).values()
    precondition(again.map { "\($0)" } == "\(values)", "the codec round trip changed \(message.signature)")
}

private func carriesFD(_ value: DBusValue) -> Bool {
    switch value {
    case .unixFD: return true
    case .array(_, let elements), .structure(let elements): return elements.contains(where: carriesFD)
    case .dictionary(_, _, let entries): return entries.contains { carriesFD($0.key) || carriesFD($0.value) }
    case .variant(let inner): return carriesFD(inner)
    default: return false
    }
}
