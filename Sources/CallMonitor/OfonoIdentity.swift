import DBus

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
