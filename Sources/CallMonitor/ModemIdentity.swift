// Who a modem is, as opposed to where it is: a modem's object path changes when it is reset or
// replugged, its equipment id does not (docs/modem-stacks.md §11).

/// What the stack says a modem is. "" = the stack does not say (or not yet). Every value came
/// from the bus: hostile input, clipped here and escaped on output like a caller id.
public struct ModemIdentity: Sendable, Equatable {
    /// The equipment identifier: the IMEI on a 3GPP modem (ModemManager `EquipmentIdentifier`,
    /// oFono `Serial`).
    public var equipmentID: String
    /// The SIM's own number (ModemManager `OwnNumbers`, the first one).
    public var ownNumber: String
    /// The network operator's name (ModemManager `Modem3gpp.OperatorName`).
    public var operatorName: String

    /// The most of a value kept: an IMEI is 15 digits, a number or operator name far shorter.
    public static let maxBytes = 64

    public static let unknown = ModemIdentity()

    public init(equipmentID: String = "", ownNumber: String = "", operatorName: String = "") {
        self.equipmentID = Self.clipped(equipmentID)
        self.ownNumber = Self.clipped(ownNumber)
        self.operatorName = Self.clipped(operatorName)
    }

    public var isUnknown: Bool { self == .unknown }

    /// Cut to `maxBytes` at a character boundary, never mid-way through a UTF-8 sequence.
    static func clipped(_ text: String) -> String {
        guard text.utf8.count > maxBytes else { return text }
        var out = ""
        for character in text {
            guard out.utf8.count + character.utf8.count <= maxBytes else { break }
            out.append(character)
        }
        return out
    }
}
