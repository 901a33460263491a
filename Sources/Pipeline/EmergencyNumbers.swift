import CallMonitor

/// Emergency numbers: the ones dialled the world over, and those a stack lists for its SIM and
/// network (ModemManager's SIM `EmergencyNumbers`, oFono's VoiceCallManager `EmergencyNumbers`).
public enum EmergencyNumbers {
    public static let common: Set<String> = EmergencyDial.common

    /// Whether `number` (its digits alone, as dialled) is an emergency number.
    public static func contains(_ number: String, extra: Set<String> = []) -> Bool {
        let digits = String(number.unicodeScalars.filter { $0.value >= 0x30 && $0.value <= 0x39 }.map(Character.init))
        guard !digits.isEmpty, digits.count <= 6 else { return false }
        return common.contains(digits) || extra.contains(digits)
    }
}
