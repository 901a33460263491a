import Contacts

/// Numbers and prefixes (`+1900*`) with the contact book's matching rule for whole numbers.
public struct NumberList: Sendable {
    /// Whole numbers, each named by where it was read.
    private var exact = ContactBook()
    /// Prefixes in canonical form (`+` and digits, `00` read as `+`), with where each was read.
    private var prefixes: [(prefix: [UInt8], source: String)] = []

    public init() {}

    public var count: Int { exact.count + prefixes.count }
    public var isEmpty: Bool { count == 0 }

    mutating func reserve(_ entries: Int) { exact.reserve(entries) }

    /// Adds an entry already checked by `ScreeningRules.entry`: digits with an optional `*`.
    mutating func add(_ entry: [UInt8], source: String) {
        if entry.last == UInt8(ascii: "*") {
            prefixes.append((NumberList.canonical(entry.dropLast()), source))
        } else {
            exact.add(digits: ContactBook.digits(of: entry), name: source)
        }
    }

    /// Where `number` is listed, or nil.
    public func source(of number: String) -> String? {
        if let source = exact.name(for: number) { return source }
        guard !prefixes.isEmpty else { return nil }
        let canonical = NumberList.canonical(number.utf8)
        for entry in prefixes where canonical.starts(with: entry.prefix) { return entry.source }
        return nil
    }

    /// `+` and digits only, a leading international `00` written `+`: prefixes compare the number
    /// as dialled, so `+1900*` matches `+1 900 …` and `001900…`, not a national form.
    static func canonical<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        var out: [UInt8] = []
        for byte in bytes {
            if byte >= 0x30 && byte <= 0x39 { out.append(byte) } else if byte == UInt8(ascii: "+") && out.isEmpty {
                out.append(byte)
            }
        }
        if out.count >= 2 && out[0] == UInt8(ascii: "0") && out[1] == UInt8(ascii: "0") {
            out.replaceSubrange(0..<2, with: [UInt8(ascii: "+")])
        }
        return out
    }
}
