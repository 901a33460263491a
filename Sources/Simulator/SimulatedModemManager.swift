import CallMonitor
import DBus

/// ModemManager's voice API as the real daemon puts it on the bus (docs/modem-stacks.md §2), served from this
/// process with the project's own DBus layer: `org.freedesktop.ModemManager1`, the ObjectManager
/// with modems only, `Modem.Voice` with ListCalls/CallAdded/CallDeleted, and calls at
/// `/org/freedesktop/ModemManager1/Call/N` whose every state change is a `StateChanged(iiu)`
/// followed by `PropertiesChanged`. A ringing call appears through `CallAdded` already RINGING_IN.
public final class SimulatedModemManager {
    public static let busName = "org.freedesktop.ModemManager1"
    public static let root: ObjectPath = "/org/freedesktop/ModemManager1"
    public static let modemInterface = "org.freedesktop.ModemManager1.Modem"
    public static let voiceInterface = "org.freedesktop.ModemManager1.Modem.Voice"
    public static let callInterface = "org.freedesktop.ModemManager1.Call"

    public final class Call {
        let path: ObjectPath
        let modem: ObjectPath
        var state: ModemManagerCallState
        var reason: ModemManagerCallStateReason
        let direction: ModemManagerCallDirection
        var number: String
        var multiparty = false

        init(path: ObjectPath, modem: ObjectPath, state: ModemManagerCallState, reason: ModemManagerCallStateReason,
             direction: ModemManagerCallDirection, number: String) {
            self.path = path
            self.modem = modem
            self.state = state
            self.reason = reason
            self.direction = direction
            self.number = number
        }
    }

    public struct SimulationError: Error, CustomStringConvertible {
        public let description: String
    }

    private let connection: Connection
    private(set) var modems: [ObjectPath] = []
    private(set) var calls: [Call] = []
    private var nextModem = 0
    private var nextCall = 0

    public init(connection: Connection) throws {
        self.connection = connection
        let manager = try ExportedInterface(BusDaemon.objectManagerInterface)
        try manager.addMethod("GetManagedObjects", out: "a{oa{sa{sv}}}") { [unowned self] _ in
            var objects: [ObjectPath: [String: PropertyMap]] = [:]
            for modem in self.modems { objects[modem] = self.modemInterfaces(modem) }
            return [objects.dbusValue]
        }
        try manager.addSignal("InterfacesAdded", signature: "oa{sa{sv}}")
        try manager.addSignal("InterfacesRemoved", signature: "oas")
        let main = try ExportedInterface("org.freedesktop.ModemManager1")
        try main.addProperty("Version", signature: "s", get: { .string("1.20.4-telwatch-simulator") })
        try main.addMethod("ScanDevices") { _ in [] }
        connection.export(ExportedObject(path: SimulatedModemManager.root, interfaces: [manager, main]))
    }

    /// Takes the well-known name; fails if a real ModemManager (or another simulator) has it.
    public func claimName() throws {
        guard try connection.requestName(SimulatedModemManager.busName) == .primaryOwner else {
            throw SimulationError(description: "\(SimulatedModemManager.busName) is already owned on this bus "
                                  + "(a real ModemManager or another simulator is running)")
        }
    }

    // MARK: Modems

    @discardableResult
    public func addModem(model: String = "Simulated Modem", announce: Bool = true) throws -> ObjectPath {
        let path = try ObjectPath("/org/freedesktop/ModemManager1/Modem/\(nextModem)")
        let index = nextModem
        nextModem += 1
        let modem = try ExportedInterface(SimulatedModemManager.modemInterface)
        let properties: [(String, String, DBusValue)] = [
            ("Manufacturer", "s", .string("telwatch")),
            ("Model", "s", .string(model)),
            ("EquipmentIdentifier", "s", .string("3569380000\(10000 + index)")),
            ("State", "i", .int32(8)),  // registered: calls can be made
            ("PowerState", "u", .uint32(3)),
            ("Device", "s", .string("simulated\(index)")),
            ("Plugin", "s", .string("simulator")),
        ]
        for (name, signature, value) in properties {
            try modem.addProperty(name, signature: signature, get: { value })
        }
        let voice = try ExportedInterface(SimulatedModemManager.voiceInterface)
        try voice.addProperty("Calls", signature: "ao", get: { [unowned self] in
            self.calls.filter { $0.modem == path }.map(\.path).dbusValue
        })
        try voice.addProperty("EmergencyOnly", signature: "b", get: { .bool(false) })
        try voice.addMethod("ListCalls", out: "ao") { [unowned self] _ in
            [self.calls.filter { $0.modem == path }.map(\.path).dbusValue]
        }
        try voice.addMethod("CreateCall", in: "a{sv}", out: "o") { [unowned self] call in
            let properties = try call.decode(PropertyMap.self)
            let created = try self.addCall(on: path, state: .unknown, reason: .unknown, direction: .outgoing,
                                           number: properties["number"]?.value.string ?? "")
            return [.objectPath(created.path)]
        }
        try voice.addMethod("DeleteCall", in: "o") { [unowned self] call in
            try self.delete(try self.call(at: try call.decode(ObjectPath.self)))
            return []
        }
        try voice.addMethod("HangupAll") { [unowned self] _ in
            for call in self.calls where call.modem == path && call.state != .terminated {
                try self.setState(call, .terminated, reason: .terminated)
            }
            return []
        }
        // As ModemManager 1.20 does it (telwatch answers a waiting call so): the active calls go
        // on hold, reported before the waiting call goes active.
        try voice.addMethod("HoldAndAccept") { [unowned self] _ in
            let live = self.calls.filter { $0.modem == path }
            guard let waiting = live.first(where: { $0.state == .waiting }) else {
                throw DBusError.remote(name: "org.freedesktop.ModemManager1.Error.Core.WrongState",
                                       message: "no call is waiting")
            }
            for call in live where call.state == .active { try self.setState(call, .held, reason: .unknown) }
            try self.setState(waiting, .active, reason: .accepted)
            return []
        }
        try voice.addSignal("CallAdded", signature: "o")
        try voice.addSignal("CallDeleted", signature: "o")
        connection.export(ExportedObject(path: path, interfaces: [modem, voice]))
        modems.append(path)
        if announce {
            try connection.emit(path: SimulatedModemManager.root, interface: BusDaemon.objectManagerInterface,
                                member: "InterfacesAdded", path, modemInterfaces(path))
        }
        return path
    }

    private func modemInterfaces(_ path: ObjectPath) -> [String: PropertyMap] {
        var out: [String: PropertyMap] = [:]
        for name in [SimulatedModemManager.modemInterface, SimulatedModemManager.voiceInterface] {
            out[name] = connection.exportedProperties(path: path, interface: name).mapValues { Variant($0) }
        }
        return out
    }

    // MARK: Calls

    public func call(at path: ObjectPath) throws -> Call {
        guard let found = calls.first(where: { $0.path == path }) else {
            throw DBusError.remote(name: "org.freedesktop.ModemManager1.Error.Core.NotFound",
                                   message: "no call \(path)")
        }
        return found
    }

    /// A call appears as ModemManager shows it: exported first, then `CallAdded`, no `StateChanged`.
    @discardableResult
    public func addCall(on modem: ObjectPath, state: ModemManagerCallState, reason: ModemManagerCallStateReason,
                 direction: ModemManagerCallDirection, number: String) throws -> Call {
        let path = try ObjectPath("/org/freedesktop/ModemManager1/Call/\(nextCall)")
        nextCall += 1
        let call = Call(path: path, modem: modem, state: state, reason: reason, direction: direction, number: number)
        calls.append(call)
        connection.export(ExportedObject(path: path, interfaces: [try callInterface(call)]))
        try connection.emitPropertiesChanged(path: modem, interface: SimulatedModemManager.voiceInterface,
                                             changed: ["Calls": calls.filter { $0.modem == modem }.map(\.path).dbusValue])
        try connection.emit(path: modem, interface: SimulatedModemManager.voiceInterface, member: "CallAdded", path)
        return call
    }

    /// `StateChanged(old, new, reason)`, then `PropertiesChanged`, as the daemon sends them.
    public func setState(_ call: Call, _ state: ModemManagerCallState, reason: ModemManagerCallStateReason) throws {
        guard call.state != state else { return }
        let old = call.state
        call.state = state
        var changed: [String: DBusValue] = ["State": .int32(state.rawValue)]
        if call.reason != reason { changed["StateReason"] = .int32(reason.rawValue) }
        call.reason = reason
        try connection.emit(path: call.path, interface: SimulatedModemManager.callInterface, member: "StateChanged",
                            old.rawValue, state.rawValue, UInt32(reason.rawValue))
        try connection.emitPropertiesChanged(path: call.path, interface: SimulatedModemManager.callInterface,
                                             changed: changed)
    }

    /// A late +CLIP: only `PropertiesChanged` on Number.
    public func setNumber(_ call: Call, _ number: String) throws {
        guard call.number != number else { return }
        call.number = number
        try connection.emitPropertiesChanged(path: call.path, interface: SimulatedModemManager.callInterface,
                                             changed: ["Number": .string(number)])
    }

    /// The far end pressed `dtmf`: `DtmfReceived(s)` on the call, as ModemManager passes on a
    /// modem's URC (one tone, or Quectel's ASCII code: docs/modem-stacks.md §14), and only for an
    /// active call, as the daemon does.
    public func hearTones(_ call: Call, _ dtmf: String) throws {
        try require(call, in: [.active], "hear tones on")
        try connection.emit(path: call.path, interface: SimulatedModemManager.callInterface, member: "DtmfReceived", dtmf)
    }

    public func delete(_ call: Call) throws {
        calls.removeAll { $0 === call }
        connection.unexport(call.path)
        try connection.emitPropertiesChanged(path: call.modem, interface: SimulatedModemManager.voiceInterface,
                                             changed: ["Calls": calls.filter { $0.modem == call.modem }.map(\.path).dbusValue])
        try connection.emit(path: call.modem, interface: SimulatedModemManager.voiceInterface, member: "CallDeleted",
                            call.path)
    }

    private func callInterface(_ call: Call) throws -> ExportedInterface {
        let interface = try ExportedInterface(SimulatedModemManager.callInterface)
        try interface.addProperty("State", signature: "i", get: { .int32(call.state.rawValue) })
        try interface.addProperty("StateReason", signature: "i", get: { .int32(call.reason.rawValue) })
        try interface.addProperty("Direction", signature: "i", get: { .int32(call.direction.rawValue) })
        try interface.addProperty("Number", signature: "s", get: { .string(call.number) })
        try interface.addProperty("Multiparty", signature: "b", get: { .bool(call.multiparty) })
        try interface.addProperty("AudioPort", signature: "s", get: { .string("") })
        try interface.addProperty("AudioFormat", signature: "a{sv}", get: { PropertyMap().dbusValue })
        try interface.addSignal("StateChanged", signature: "iiu")
        try interface.addSignal("DtmfReceived", signature: "s")
        // The real methods, so a client can drive the simulator as it would drive ModemManager.
        try interface.addMethod("Start") { [unowned self] _ in
            try self.require(call, in: [.unknown], "start")
            try self.setState(call, .dialing, reason: .outgoingStarted)
            return []
        }
        try interface.addMethod("Accept") { [unowned self] _ in
            try self.require(call, in: [.ringingIn, .waiting], "accept")
            try self.setState(call, .active, reason: .accepted)
            return []
        }
        try interface.addMethod("Hangup") { [unowned self] _ in
            try self.require(call, in: [.unknown, .dialing, .ringingOut, .ringingIn, .active, .held, .waiting], "hang up")
            try self.setState(call, .terminated, reason: .terminated)
            return []
        }
        try interface.addMethod("SendDtmf", in: "s") { _ in [] }
        return interface
    }

    private func require(_ call: Call, in states: Set<ModemManagerCallState>, _ action: String) throws {
        guard states.contains(call.state) else {
            throw DBusError.remote(name: "org.freedesktop.ModemManager1.Error.Core.WrongState",
                                   message: "cannot \(action) a call in state \(call.state.rawValue)")
        }
    }
}
