/// Whether a number is one a modem would dial as an emergency call: no act telwatch is asked
/// for from afar dials one or deflects a call to one (docs/modem-stacks.md §13).
public enum EmergencyDial {
    /// The numbers dialled as emergency numbers the world over (call screening's too).
    public static let common: Set<String> = ["112", "911", "999", "000", "110", "118", "119", "100", "101",
                                             "102", "108", "15", "17", "18", "190", "192", "193"]

    /// Hiding or showing the caller's number (`*31#`, `#31#`) in front of a number still dials it.
    static let callerIDPrefixes = ["*31#", "#31#"]

    /// `number` as a modem would dial it, compared with the common numbers and `listed` (the
    /// stacks' lists for their SIMs and networks). It errs on the side of refusing: the caller-ID
    /// prefixes are taken off, then every `+`, `*` and `#` (`+112`, `112#` and `*112` are all
    /// 112 to a modem that reads them loosely), and an international `00` in front is tried both
    /// with and without.
    public static func isEmergency(_ number: DialString, listed: Set<String> = []) -> Bool {
        var rest = Substring(number.value)
        var stripped = true
        while stripped {
            stripped = false
            for prefix in callerIDPrefixes where rest.hasPrefix(prefix) {
                rest = rest.dropFirst(prefix.count)
                stripped = true
            }
        }
        let digits = String(rest.filter { $0.isASCII && $0.isNumber })
        var candidates = [digits]
        if digits.hasPrefix("00") { candidates.append(String(digits.dropFirst(2))) }
        return candidates.contains { !$0.isEmpty && (common.contains($0) || listed.contains($0)) }
    }
}
