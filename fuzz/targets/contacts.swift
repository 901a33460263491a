// Fuzz target: the contacts file (`--contacts FILE`): vCard 3 and 4, or NUMBER<TAB>NAME lines.
//
// A phone's export is the user's, but it passes through sync tools and hand edits. Checked
// besides "no crash, no sanitizer finding":
// - every number the book holds is found by a lookup of itself, and every name it gives is a
//   name the book was given: non-empty, without blanks around it, made of the file's characters
//   (a TSV's name is a piece of the file as it is; a vCard's may be unescaped and reordered);
// - `sameNumber` is reflexive and symmetric, and agrees with a book of one contact;
// - a lookup of any number (pieces of the input) never crashes, with or without a book.

@testable import Contacts

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // A few pieces of the input, as numbers to look up: each line's first 40 bytes, up to 8.
    let candidates = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(8)
        .map { String(decoding: $0.prefix(40), as: UTF8.self) }
    checkSameNumber(candidates)
    guard let book = try? ContactBook.parse(bytes) else { return 0 }
    let isVCard = bytes.withUnsafeBufferPointer { buffer in
        ContactFileBytes.lines(of: buffer).contains { ContactFileBytes.equalsIgnoringCase($0, "BEGIN:VCARD") }
    }
    // What a name may be made of: the file's characters, after vCard unfolding (which may join
    // the bytes of one character split over two lines).
    let source = String(decoding: isVCard ? VCardReader.unfold(bytes).bytes : bytes, as: UTF8.self)
    let sourceScalars = Set(source.unicodeScalars).union(["\n", " "])
    let given = Set(book.names.values)
    for name in given {
        precondition(!name.isEmpty && name.trimmingBlanks() == name, "name '\(name)' is empty or not trimmed")
        precondition(isVCard ? name.unicodeScalars.allSatisfy(sourceScalars.contains) : source.contains(name),
                     "name '\(name)' is not made of the file")
    }
    for key in book.names.keys {
        let (bucket, length) = (Int(key >> 56), Int(key >> 48 & 0xFF))
        // The key of the number itself (its whole length); the others are its shorter suffixes.
        guard bucket == 0 || bucket == length else { continue }
        let digits = String(key & 0xFFFF_FFFF_FFFF)
        let number = String(repeating: "0", count: max(0, length - digits.count)) + digits
        guard let name = book.name(for: "+" + number) else { preconditionFailure("\(number) is not found in its own book") }
        precondition(given.contains(name), "a lookup gave '\(name)', which no contact has")
    }
    for number in candidates {
        if let name = book.name(for: number) { precondition(given.contains(name), "a lookup gave '\(name)'") }
    }
    return 0
}

private func checkSameNumber(_ numbers: [String]) {
    for a in numbers {
        precondition(ContactBook.sameNumber(a, a), "'\(a)' is not the same number as itself")
        let single = ContactBook(entries: [(a, "x")])
        for b in numbers {
            let same = ContactBook.sameNumber(a, b)
            precondition(same == ContactBook.sameNumber(b, a), "sameNumber('\(a)', '\(b)') is not symmetric")
            // A book answers for numbers with digits only; sameNumber compares the rest as text.
            if ContactBook.digits(of: a.utf8).count > 0 && ContactBook.digits(of: b.utf8).count > 0 {
                precondition((single.name(for: b) != nil) == same, "a book of '\(a)' and sameNumber disagree on '\(b)'")
            }
        }
    }
}
