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
