import DBus

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
