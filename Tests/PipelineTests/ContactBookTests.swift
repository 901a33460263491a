import Contacts
import Glibc
import Loop
import Pipeline
import TestSupport
import XCTest

/// Contacts as phones export them, and the rule that puts a name on a number.
final class ContactBookTests: XCTestCase {
    private func book(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> ContactBook {
        do { return try ContactBook.parse(text) } catch {
            XCTFail("refused: \(error)", file: file, line: line)
            return ContactBook()
        }
    }

    private func refusal(_ text: String) -> String? {
        do { _ = try ContactBook.parse(text); return nil } catch { return error.description }
    }

    // MARK: Matching

    func testNationalAndInternationalFormsOfANumberMatch() {
        let contacts = ContactBook(entries: [("+49 171 1234567", "Ada"), ("(555) 123-0001", "Bob"), ("+47 12345678", "Nils")])
        for number in ["+491711234567", "00491711234567", "01711234567", "0171/123 45 67"] {
            XCTAssertEqual(contacts.name(for: number), "Ada", number)
        }
        XCTAssertEqual(contacts.name(for: "+15551230001"), "Bob")
        XCTAssertEqual(contacts.name(for: "12345678"), "Nils", "an 8-digit national number")
        XCTAssertEqual(contacts.name(for: "+4712345678"), "Nils")
        XCTAssertNil(contacts.name(for: "+491711234568"))
        XCTAssertNil(contacts.name(for: "withheld"))
        XCTAssertNil(contacts.name(for: ""))
    }

    func testShortNumbersMatchOnlyThemselvesAndNeverTheEndOfALongOne() {
        let contacts = ContactBook(entries: [("112", "Emergency"), ("+1 555 000 4567", "Long")])
        XCTAssertEqual(contacts.name(for: "112"), "Emergency")
        XCTAssertNil(contacts.name(for: "4567"), "four digits do not match the end of a long number")
        XCTAssertNil(contacts.name(for: "+44112"))
    }

    func testTheLongestAgreementWinsThenTheFirstInTheFile() {
        let contacts = ContactBook(entries: [("1234567", "Seven"), ("+33 6 12 34 56 78", "Paris"),
                                             ("06 12 34 56 78", "Second Paris")])
        XCTAssertEqual(contacts.name(for: "+33612345678"), "Paris", "nine digits agree, not only seven; the first wins")
        XCTAssertEqual(contacts.name(for: "+41 99 1234567"), "Seven", "seven digits of a seven-digit contact")
    }

    // MARK: vCard

    func testAVCardFileAsPhonesExportIt() {
        let contacts = book("""
        BEGIN:VCARD\r
        VERSION:3.0\r
        N:Lovelace;Ada;;;\r
        FN:Ada Lovelace\r
        TEL;TYPE=CELL:+49 171 1234567\r
        item1.TEL;type=pref:0301234567\r
        item1.X-ABLabel:work\r
        END:VCARD\r
        begin:vcard
        version:4.0
        fn:Grace
          Hopper
        tel;value=uri;type="voice,cell":tel:+1-555-123-0002;ext=9
        END:VCARD
        BEGIN:VCARD
        VERSION:3.0
        N:Turing;Alan;Mathison;Dr.;
        TEL:+44 20 7946 0000
        END:VCARD
        BEGIN:VCARD
        FN:No Number
        END:VCARD
        """)
        XCTAssertEqual(contacts.name(for: "01711234567"), "Ada Lovelace")
        XCTAssertEqual(contacts.name(for: "+49301234567"), "Ada Lovelace", "every TEL of a card")
        XCTAssertEqual(contacts.name(for: "5551230002"), "Grace Hopper", "a folded line, a tel: URI, lower case")
        XCTAssertEqual(contacts.name(for: "+442079460000"), "Alan Mathison Turing", "N when there is no FN")
        XCTAssertEqual(contacts.count, 4)
    }

    func testEscapesInANameAreUndoneAndHostileBytesKept() {
        let contacts = book("BEGIN:VCARD\nFN:Smith\\, John\\; \\\\ \\nX \u{1B}[31m'; rm -rf ~ #\nTEL:+15550001\nEND:VCARD\n")
        XCTAssertEqual(contacts.name(for: "+15550001"), "Smith, John; \\ \nX \u{1B}[31m'; rm -rf ~ #")
    }

    func testABackslashBeforeABrokenByteIsKeptAndJoinsNothing() throws {
        // Dropped, the backslash would join the bytes DF and 90 into U+07D0, a character the
        // file never had (found by the contacts fuzz target).
        let broken: [UInt8] = [UInt8(ascii: "A"), 0xDF, UInt8(ascii: "\\"), 0x90]
        for property in ["FN:", "N:;"] {
            let file = Array("BEGIN:VCARD\n\(property)".utf8) + broken + Array("\nTEL:+15550001\nEND:VCARD\n".utf8)
            let name = try XCTUnwrap(try ContactBook.parse(file).name(for: "+15550001"), property)
            XCTAssertEqual(name, String(decoding: broken, as: UTF8.self), property)
            XCTAssertFalse(name.unicodeScalars.contains("\u{07D0}"), property)
        }
    }

    func testABrokenVCardFileIsRefusedWithItsLine() {
        XCTAssertEqual(refusal("BEGIN:VCARD\nFN:A\nTEL:1234567\n"), "line 1: this card has no END:VCARD")
        XCTAssertEqual(refusal("BEGIN:VCARD\nFN:A\nBEGIN:VCARD\nEND:VCARD\n"),
                       "line 1: this card has no END:VCARD before the next BEGIN:VCARD")
        XCTAssertEqual(refusal("BEGIN:VCARD\nFN:A\nEND:VCARD\n"), "no card has both a name (FN or N) and a number (TEL)")
    }

    // MARK: TSV

    func testATwoColumnTSVWithCommentsAndAHeader() {
        let contacts = book("number\tname\n# family\n+49 171 1234567\tAda\textra column\n\n+15550002\t Bob \n")
        XCTAssertEqual(contacts.name(for: "01711234567"), "Ada")
        XCTAssertEqual(contacts.name(for: "5550002"), "Bob")
        XCTAssertEqual(contacts.count, 2)
    }

    func testATSVLineWithoutATabIsRefusedWithItsLine() {
        XCTAssertEqual(refusal("+1555\tA\n+1556 B\n"), "line 2: expected NUMBER<TAB>NAME (or a vCard file)")
        XCTAssertNil(refusal(""), "an empty file is an empty book")
    }

    // MARK: Size

    func testFiveThousandCardsInMixedFormsAllFindTheirName() {
        var text = ""
        for index in 0..<5_000 {
            let number = 100_000_000 + index * 7
            switch index % 4 {
            case 0: text += "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Person \(index)\r\nTEL;TYPE=CELL:+49 \(number)\r\nEND:VCARD\r\n"
            case 1: text += "BEGIN:VCARD\nVERSION:4.0\nFN:Person\n  \(index)\nTEL;VALUE=uri:tel:+49-\(number)\nEND:VCARD\n"
            case 2: text += "BEGIN:VCARD\nN:\(index);Person;;;\nitem\(index).TEL:0\(number)\nEND:VCARD\n"
            default: text += "begin:vcard\nfn:Person \(index)\ntel:(0) \(number)\ntel;type=work:+1 \(number)\nend:vcard\n"
            }
        }
        let contacts = book(text)
        XCTAssertEqual(contacts.count, 5_000 + 1_250)
        for index in stride(from: 0, to: 5_000, by: 1) {
            let number = 100_000_000 + index * 7
            XCTAssertEqual(contacts.name(for: "+49\(number)"), "Person \(index)")
        }
    }

    // MARK: Following the file

    func testTheFileIsReadAgainWhenWrittenOrReplacedAndABadOneKeepsTheOldContacts() throws {
        let loop = try EventLoop()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/contacts.tsv"
        try Files.write(path, "+15550001\tFirst\n")
        var reports: [String] = []
        let contacts = ContactDirectory(path: path, loop: loop) { reports.append($0) }
        XCTAssertEqual(contacts.name(for: "+15550001"), "First")

        // Written in place.
        try Files.write(path, "+15550001\tSecond\n")
        XCTAssertTrue(loop.run(until: { contacts.name(for: "+15550001") == "Second" }, timeout: 10))

        // Replaced by a rename, as editors save.
        try Files.write(scratch.path + "/.contacts.tsv.new", "+15550001\tThird\n")
        XCTAssertEqual(rename(scratch.path + "/.contacts.tsv.new", path), 0)
        XCTAssertTrue(loop.run(until: { contacts.name(for: "+15550001") == "Third" }, timeout: 10))

        // A bad file: one line, the contacts stay.
        try Files.write(path, "+15550001 no tab\n")
        XCTAssertTrue(loop.run(until: { !reports.isEmpty }, timeout: 10))
        XCTAssertEqual(reports, ["contacts: \(path): line 1: expected NUMBER<TAB>NAME (or a vCard file); "
                                 + "the 1 numbers read before stay"])
        XCTAssertEqual(contacts.name(for: "+15550001"), "Third")

        // Another file of the directory changes nothing.
        try Files.write(scratch.path + "/other", "x")
        try Files.write(path, "+15550001\tFourth\n")
        XCTAssertTrue(loop.run(until: { contacts.name(for: "+15550001") == "Fourth" }, timeout: 10))
        XCTAssertEqual(reports.count, 1)
    }

    func testAMissingFileIsSaidOnceAndReadWhenItAppears() throws {
        let loop = try EventLoop()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/contacts.vcf"
        var reports: [String] = []
        let contacts = ContactDirectory(path: path, loop: loop) { reports.append($0) }
        XCTAssertEqual(reports, ["contacts: cannot read \(path): No such file or directory; no contact names until it is fixed"])
        try Files.write(path, "BEGIN:VCARD\nFN:Late\nTEL:+15550009\nEND:VCARD\n")
        XCTAssertTrue(loop.run(until: { contacts.name(for: "+15550009") == "Late" }, timeout: 10))
    }
}
