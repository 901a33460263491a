// Reading a modem's identity from the properties each stack already sends (docs/modem-stacks.md §11).

import DBus

/// What one listing or change said about a modem's identity; nil = not said (keep the old value).
struct ModemIdentityChange: Equatable {
    var equipmentID: String?
    var ownNumber: String?
    var operatorName: String?

    var isEmpty: Bool { equipmentID == nil && ownNumber == nil && operatorName == nil }

    /// The identity with what this change says applied.
    func applied(to identity: ModemIdentity) -> ModemIdentity {
        ModemIdentity(equipmentID: equipmentID ?? identity.equipmentID,
                      ownNumber: ownNumber ?? identity.ownNumber,
                      operatorName: operatorName ?? identity.operatorName)
    }

    /// A text property; one of another type is described in `problems` and left out.
    static func text(_ name: String, _ value: DBusValue, problems: inout [String]) -> String? {
        guard let text = value.string else {
            problems.append("\(name) is not a string (\(CallText.clip(value.signature.rawValue)))")
            return nil
        }
        return text
    }
}

/// The emergency numbers a stack lists (`as` on both stacks). Caller-facing data from the stack
/// is hostile input: only entries of 1 to 6 digits are kept (what an emergency number is to
/// call screening, docs/screening.md), at most `limit`. nil when the value is not a list of strings.
enum StackEmergencyNumbers {
    static let limit = 32

    static func parse(_ value: DBusValue) -> [String]? {
        guard let list = value.as([String].self) else { return nil }
        let digits = list.filter { entry in
            !entry.isEmpty && entry.utf8.count <= 6 && entry.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        }
        return Array(digits.prefix(limit))
    }
}

/// ModemManager: `Modem.EquipmentIdentifier` (s), `Modem.OwnNumbers` (as: the first is kept) and
/// `Modem.Modem3gpp.OperatorName` (s).
enum ModemManagerIdentity {
    static let modem = "org.freedesktop.ModemManager1.Modem"
    static let modem3gpp = "org.freedesktop.ModemManager1.Modem.Modem3gpp"

    /// Whether `name` of `interface` is one telwatch reads: the others are not even decoded.
    static func isUsed(_ interface: String, _ name: String) -> Bool {
        switch (interface, name) {
        case (modem, "EquipmentIdentifier"), (modem, "OwnNumbers"), (modem3gpp, "OperatorName"): return true
        default: return false
        }
    }

    static func apply(_ interface: String, _ name: String, _ value: DBusValue, to change: inout ModemIdentityChange,
                      problems: inout [String]) {
        switch (interface, name) {
        case (modem, "EquipmentIdentifier"):
            change.equipmentID = ModemIdentityChange.text(name, value, problems: &problems)
        case (modem3gpp, "OperatorName"):
            change.operatorName = ModemIdentityChange.text(name, value, problems: &problems)
        case (modem, "OwnNumbers"):
            guard let numbers = value.as([String].self) else {
                problems.append("OwnNumbers is not a list of strings (\(CallText.clip(value.signature.rawValue)))")
                return
            }
            change.ownNumber = numbers.first ?? ""
        default:
            break
        }
    }

    /// What an object's interfaces (GetManagedObjects, InterfacesAdded) say; nil when the object
    /// is not a modem.
    static func change(_ interfaces: [String: PropertyMap], problems: inout [String]) -> ModemIdentityChange? {
        guard interfaces[modem] != nil || interfaces[modem3gpp] != nil else { return nil }
        var change = ModemIdentityChange()
        for interface in [modem, modem3gpp] {
            guard let map = interfaces[interface] else { continue }
            for (name, value) in map where isUsed(interface, name) {
                apply(interface, name, value.value, to: &change, problems: &problems)
            }
        }
        return change
    }
}

/// oFono: the modem's `Serial` (the IMEI on a 3GPP modem), in `GetModems`, `ModemAdded` and the
/// modem's `PropertyChanged`. Operator and own number live on other interfaces (see
/// docs/modem-stacks.md §11 for why they are left out).
enum OfonoIdentity {
    static func change(_ properties: PropertyMap, problems: inout [String]) -> ModemIdentityChange {
        var change = ModemIdentityChange()
        if let serial = properties["Serial"] {
            change.equipmentID = ModemIdentityChange.text("Serial", serial.value, problems: &problems)
        }
        return change
    }
}

/// The identities of one backend's modems: every modem object heard of (a modem may get its
/// voice interface only once enabled), bounded, and told to the tracker for the voice modems
/// only, when it changes.
struct ModemIdentityBook {
    /// More modems than any host has: a flood of made-up ones does not grow memory.
    static let maxModems = 64

    private var known: [String: ModemIdentity] = [:]
    /// What the tracker was last told, per voice modem.
    private var told: [String: ModemIdentity] = [:]

    /// Applies a change; returns the identity to tell if `voice` and it is news.
    mutating func apply(_ change: ModemIdentityChange, modem: String, voice: Bool) -> ModemIdentity? {
        guard known[modem] != nil || known.count < Self.maxModems else { return nil }
        known[modem] = change.applied(to: known[modem] ?? .unknown)
        return voice ? toTell(modem) : nil
    }

    /// The identity to tell for a voice modem, if it has one the tracker was not told.
    mutating func toTell(_ modem: String) -> ModemIdentity? {
        guard let identity = known[modem], identity != told[modem] ?? .unknown else { return nil }
        told[modem] = identity
        return identity
    }

    /// The modem's voice went (the tracker forgets it): tell it again if the voice comes back.
    mutating func untold(_ modem: String) { told.removeValue(forKey: modem) }

    mutating func forget(_ modem: String) {
        known.removeValue(forKey: modem)
        told.removeValue(forKey: modem)
    }

    /// Keeps only the modems in `present` (a sync's listing).
    mutating func keep(_ present: Set<String>) {
        known = known.filter { present.contains($0.key) }
        told = told.filter { present.contains($0.key) }
    }

    mutating func removeAll() {
        known.removeAll()
        told.removeAll()
    }
}
