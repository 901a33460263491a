import DBus

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
