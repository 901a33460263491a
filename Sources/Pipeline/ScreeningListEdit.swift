/// The rules file's list a command puts a number on: `telwatch block` and `telwatch allow`.
import Contacts

/// The edit behind `telwatch block` and `telwatch allow` (docs/screening.md, "From the command
/// line"), bytes in and bytes out: every line it does not edit, comments included, stays as it
/// was, byte for byte.
public enum ScreeningListEdit {
    /// Puts `number` (a `ScreeningRules.listEntry`) on `list`: appends `block NUMBER` or
    /// `allow NUMBER` unless a line of the list holds the same number already, and takes it out
    /// of the opposite list's lines (a line left without a number goes, with its comment).
    /// `block` lines count as holding it only with the action `reject` (the block command's).
    public static func put(_ number: [UInt8], on list: ScreeningList, in bytes: [UInt8]) -> ScreeningListChange {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + number.count + 8)
        var listed = false
        var takenOut: [Int] = []
        var lineEnd: [UInt8] = [newline]
        var start = 0
        var lineNumber = 0
        while start < bytes.count {
            lineNumber += 1
            let end = bytes[start...].firstIndex(of: newline) ?? bytes.count
            let next = end < bytes.count ? end + 1 : end
            if lineNumber == 1, end < bytes.count, end > start, bytes[end - 1] == carriageReturn {
                lineEnd = [carriageReturn, newline]
            }
            // A byte-order mark before the first line stays, and is no part of its first word.
            let skipped = lineNumber == 1 && bytes.starts(with: ScreeningRules.byteOrderMark)
                ? ScreeningRules.byteOrderMark.count : 0
            let line = RuleLine(bytes, start + skipped..<end)
            if line.list == list, line.action == .reject, line.numbers.contains(where: { same(bytes[$0], number) }) {
                listed = true
            }
            let matching = line.list == list.opposite ? line.numbers.filter { same(bytes[$0], number) } : []
            if matching.isEmpty {
                out += bytes[start..<next]
            } else {
                takenOut.append(lineNumber)
                if matching.count < line.numbers.count {
                    // Each word goes with the blanks before it: the rest of the line stays as written.
                    var from = start
                    for word in matching {
                        var blanks = word.lowerBound
                        while blanks > start, isBlank(bytes[blanks - 1]) { blanks -= 1 }
                        out += bytes[from..<blanks]
                        from = word.upperBound
                    }
                    out += bytes[from..<next]
                }
            }
            start = next
        }
        if !listed {
            if let last = out.last, last != newline { out += lineEnd }
            out += Array(list.rawValue.utf8) + [UInt8(ascii: " ")] + number + lineEnd
        }
        return ScreeningListChange(bytes: out, appended: !listed, takenOut: takenOut)
    }

    /// Whether a word of a rule names the same number: whole numbers by the contact book's rule,
    /// a prefix only when written identically.
    static func same(_ word: ArraySlice<UInt8>, _ number: [UInt8]) -> Bool {
        if word.last == star || number.last == star { return word.elementsEqual(number) }
        guard ScreeningRules.entry(Array(word)) != nil else { return false }
        // Both are entries, so each has a digit.
        return ContactBook.sameNumber(ContactBook.digits(of: word), ContactBook.digits(of: number))
    }

    /// A line as the rules parser splits it: words up to a `#`, separated by blanks; for a
    /// `block` or `allow` rule, its list, its action and where each of its numbers is.
    private struct RuleLine {
        var list: ScreeningList?
        /// nil for `run NAME` (a reject that runs a command).
        var action: ScreeningAction? = .reject
        var numbers: [Range<Int>] = []

        init(_ bytes: [UInt8], _ range: Range<Int>) {
            var words: [Range<Int>] = []
            var index = range.lowerBound
            while index < range.upperBound, bytes[index] != hash {
                if isBlank(bytes[index]) || bytes[index] == carriageReturn {
                    index += 1
                    continue
                }
                let wordStart = index
                while index < range.upperBound, !isBlank(bytes[index]), bytes[index] != hash,
                      bytes[index] != carriageReturn {
                    index += 1
                }
                words.append(wordStart..<index)
            }
            guard let first = words.first,
                  let list = ScreeningList(rawValue: String(decoding: bytes[first], as: UTF8.self)) else { return }
            self.list = list
            numbers = Array(words.dropFirst())
            guard list == .block, let word = numbers.first else { return }
            let text = String(decoding: bytes[word], as: UTF8.self)
            if text == "run" {
                // `run NAME` rejects and runs a command: no plain reject, as the block command writes.
                action = nil
            } else if let given = ScreeningAction(rawValue: text) {
                action = given
            } else {
                return
            }
            // `deflect NUMBER` and `run NAME` take a word of their own, which is no blocked number.
            numbers.removeFirst(text == "run" || action == .deflect ? min(2, numbers.count) : 1)
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let hash = UInt8(ascii: "#")
    private static let star = UInt8(ascii: "*")
}
