/// A number to dial (or deflect to) or a string of tones to send, checked before it reaches a
/// stack: the ModemManager that Debian ships writes a number into `ATD…;` and `AT+CTFR="…"` as
/// given, so a `;` or a control character would be a command of its own at the modem
/// (docs/modem-stacks.md §13). Only dial characters pass; everything else is refused, never cleaned.
public struct DialString: Equatable, Hashable, Sendable {
    public enum Kind: Sendable { case number, tones }

    /// A number has at most this many dial characters (E.164's 15 digits, a `+`, and room for
    /// a service code in front).
    public static let numberLimit = 32
    public static let tonesLimit = 64
    /// What is looked at, at most: longer input is refused unread.
    static let inputLimit = 128

    public let kind: Kind
    /// What the stack is given: dial characters only.
    public let value: String

    /// Digits, `*`, `#`, and `+` first (or right after `*31#` or `#31#`, which hide or show the
    /// caller's number for this call). Spaces, `-`, `.`, `(` and `)` are formatting people write
    /// numbers with, and are dropped.
    public init(number raw: String) throws(DialStringRefusal) {
        try self.init(.number, raw, limit: Self.numberLimit) { scalar, kept in
            switch scalar {
            case "0"..."9", "*", "#": return .keep(scalar)
            case "+":
                return kept.isEmpty || EmergencyDial.callerIDPrefixes.contains(kept) ? .keep(scalar) : .refuse(.plusNotFirst)
            case " ", "-", ".", "(", ")": return .drop
            default: return .refuse(.forbidden(scalar.value))
            }
        }
    }

    /// Digits, `*`, `#` and `A`–`D` (lowercase is taken as uppercase): the sixteen DTMF tones.
    public init(tones raw: String) throws(DialStringRefusal) {
        try self.init(.tones, raw, limit: Self.tonesLimit) { scalar, _ in
            switch scalar {
            case "0"..."9", "*", "#", "A"..."D": return .keep(scalar)
            case "a"..."d": return .keep(Unicode.Scalar(scalar.value - 0x20)!)
            default: return .refuse(.forbidden(scalar.value))
            }
        }
    }

    private enum Verdict {
        case keep(Unicode.Scalar)
        case drop
        case refuse(DialStringRefusal)
    }

    private init(_ kind: Kind, _ raw: String, limit: Int,
                 _ judge: (Unicode.Scalar, _ kept: String) -> Verdict) throws(DialStringRefusal) {
        guard raw.unicodeScalars.count <= Self.inputLimit else { throw .tooLong(limit: limit) }
        var kept = ""
        for scalar in raw.unicodeScalars {
            switch judge(scalar, kept) {
            case .keep(let dial): kept.unicodeScalars.append(dial)
            case .drop: continue
            case .refuse(let why): throw why
            }
        }
        guard !kept.isEmpty else { throw .empty }
        guard kept.unicodeScalars.count <= limit else { throw .tooLong(limit: limit) }
        self.kind = kind
        value = kept
    }
}

/// Why a number or a tone string was refused.
public enum DialStringRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// No dial character at all.
    case empty
    case tooLong(limit: Int)
    /// A `+` anywhere but first (or right after a caller-ID prefix).
    case plusNotFirst
    /// A character that is not a dial character: `;`, a control character, a pause (`,`, `p`,
    /// `w`), a letter… (its Unicode scalar value, never the character itself: it may be a newline).
    case forbidden(UInt32)

    public var description: String {
        switch self {
        case .empty: return "no digits"
        case .tooLong(let limit): return "longer than \(limit) dial characters"
        case .plusNotFirst: return "'+' only as the first character"
        case .forbidden(let value):
            let printable = value >= 0x21 && value <= 0x7E && value != 0x27
            return printable ? "'\(Character(Unicode.Scalar(value)!))' is not a dial character"
                : "U+\(String(value, radix: 16, uppercase: true).leftPadded(to: 4)) is not a dial character"
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
