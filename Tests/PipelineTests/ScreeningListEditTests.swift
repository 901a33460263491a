import Pipeline
import XCTest

/// `telwatch block` and `telwatch allow`'s edit of a rules file, bytes in and bytes out
/// (docs/screening.md, "From the command line").
final class ScreeningListEditTests: XCTestCase {
    private func put(_ number: String, on list: ScreeningList,
                     in text: String) -> (text: String, change: ScreeningListChange) {
        guard case .success(let entry) = ScreeningRules.listEntry(Array(number.utf8)) else {
            XCTFail("\(number) refused")
            return (text, ScreeningListChange(bytes: [], appended: false, takenOut: []))
        }
        let change = ScreeningListEdit.put(entry, on: list, in: Array(text.utf8))
        return (String(decoding: change.bytes, as: UTF8.self), change)
    }

    private func decide(_ text: String, _ number: String) -> ScreeningAction? {
        let rules = try? ScreeningRules.parse(Array(text.utf8), path: "/r.conf") { _ in [] }
        XCTAssertNotNil(rules, text)
        return rules?.decide(number: number, facts: ScreeningFacts(), now: 0, local: LocalTime(weekday: 3, minute: 0))?.action
    }

    func testANumberIsAppendedAndEveryOtherByteKept() {
        let before = "# my rules\n\nblock-list spam.txt   # big list\nquiet 22:00-07:00\t mon-fri\n"
        let (after, change) = put("+19005550100", on: .block, in: before)
        XCTAssertEqual(after, before + "block +19005550100\n")
        XCTAssertEqual(change, ScreeningListChange(bytes: Array(after.utf8), appended: true, takenOut: []))
        XCTAssertEqual(put("+1555", on: .allow, in: "").text, "allow +1555\n", "a new file")
        XCTAssertEqual(put("+1555", on: .allow, in: "block +1900*").text, "block +1900*\nallow +1555\n",
                       "a last line without its newline gets one")
        XCTAssertEqual(put("+1555", on: .block, in: "# a\r\nallow +1666\r\n").text, "# a\r\nallow +1666\r\nblock +1555\r\n",
                       "a file of CRLF lines gets one too")
    }

    func testBlanksInsideANumberAreTakenOutForTheRulesLine() {
        XCTAssertEqual(put("+49 171 1234567", on: .block, in: "").text, "block +491711234567\n")
        XCTAssertEqual(put(" 0800* ", on: .block, in: "").text, "block 0800*\n")
    }

    func testBlockAndAllowToggle() {
        let blocked = put("+19005550100", on: .block, in: "block +1900*\n").text
        XCTAssertEqual(decide(blocked, "+19005550100"), .reject)
        let allowed = put("+19005550100", on: .allow, in: blocked)
        XCTAssertEqual(allowed.text, "block +1900*\nallow +19005550100\n")
        XCTAssertEqual(allowed.change.takenOut, [2])
        XCTAssertEqual(decide(allowed.text, "+19005550100"), .allow)
        let again = put("+19005550100", on: .block, in: allowed.text)
        XCTAssertEqual(again.text, "block +1900*\nblock +19005550100\n")
        XCTAssertEqual(decide(again.text, "+19005550100"), .reject)
    }

    /// The contact book's rule: national and international forms are one number.
    func testTheSameNumberInAnotherFormIsTheSameNumber() {
        let before = "allow 0171-1234567   # Ada\nblock +1900*\n"
        let (after, change) = put("+49 171 1234567", on: .block, in: before)
        XCTAssertEqual(after, "block +1900*\nblock +491711234567\n", "a line left without a number goes, with its comment")
        XCTAssertEqual(change.takenOut, [1])
        let present = put("01711234567", on: .block, in: after)
        XCTAssertFalse(present.change.changed)
        XCTAssertEqual(present.text, after)
        XCTAssertNotEqual(put("+491711234568", on: .block, in: after).text, after, "another number")
    }

    func testInALineOfSeveralNumbersOnlyThatNumberIsTakenOut() {
        let before = "allow +1555 +1666\t+1777   # friends\nallow +1555\n"
        let (after, change) = put("+1666", on: .block, in: before)
        XCTAssertEqual(after, "allow +1555\t+1777   # friends\nallow +1555\nblock +1666\n")
        XCTAssertEqual(change.takenOut, [1])
        let first = put("+1555", on: .block, in: after)
        XCTAssertEqual(first.text, "allow\t+1777   # friends\nblock +1666\nblock +1555\n")
        XCTAssertEqual(first.change.takenOut, [1, 2])
        XCTAssertEqual(put("+1555", on: .allow, in: "block silence +1555 +1666\n").text,
                       "block silence +1666\nallow +1555\n", "the action word stays")
    }

    func testANumberOnBothListsIsTakenOffTheOtherOne() {
        let (after, change) = put("+1555", on: .block, in: "block +1555\nallow +1555\n")
        XCTAssertEqual(after, "block +1555\n")
        XCTAssertEqual(change, ScreeningListChange(bytes: Array(after.utf8), appended: false, takenOut: [2]))
        XCTAssertTrue(change.changed)
    }

    func testAPrefixIsTheSameOnlyWhenWrittenIdentically() {
        let before = "allow +1900* 001900*\n"
        XCTAssertEqual(put("+1900*", on: .block, in: before).text, "allow 001900*\nblock +1900*\n")
        XCTAssertEqual(put("+19005550100", on: .block, in: before).text, before + "block +19005550100\n",
                       "a number is not a prefix")
        XCTAssertFalse(put("+1900*", on: .block, in: "block +1900* # spam\n").change.changed)
        XCTAssertTrue(put("+1900", on: .block, in: "block +1900*\n").change.appended)
    }

    /// `block` puts a number on the reject list: one blocked with another action is not that.
    func testABlockLineWithAnotherActionIsNotTheBlockList() {
        let (after, change) = put("+1555", on: .block, in: "block silence +1555\n")
        XCTAssertEqual(after, "block silence +1555\nblock +1555\n")
        XCTAssertTrue(change.appended)
        XCTAssertEqual(decide(after, "+1555"), .reject)
        XCTAssertFalse(put("+1555", on: .block, in: "block reject +1555\n").change.changed)
    }

    /// The byte-order mark stays where it is, and the first line behind it is read as a rule.
    func testTheFirstLineBehindAByteOrderMarkIsEditedAsAnyLine() {
        let bom = "\u{FEFF}"
        let (after, change) = put("+1555", on: .allow, in: bom + "block +1555 +1666\n")
        XCTAssertEqual(after, bom + "block +1666\nallow +1555\n")
        XCTAssertEqual(change.takenOut, [1])
        XCTAssertEqual(put("+1666", on: .block, in: bom + "block +1666\n").change.appended, false, "already blocked")
    }

    func testOtherRulesAndCommentsAreNeverTouched() {
        let before = "# allow +1555\nblock-list +1555\nallow-list friends.txt # allow +1555\nunknown silence\n"
        XCTAssertEqual(put("+1555", on: .block, in: before).text, before + "block +1555\n")
        XCTAssertEqual(put("+1555", on: .allow, in: "block +1666 # not +1555\n").text,
                       "block +1666 # not +1555\nallow +1555\n")
    }

    func testAListEntryIsCheckedAsAListFileLineIs() {
        func refusal(_ bytes: [UInt8]) -> String? {
            if case .failure(let refused) = ScreeningRules.listEntry(bytes) { return refused.reason }
            return nil
        }
        XCTAssertEqual(refusal(Array("+1\u{1B}[2J".utf8)), "a control character (0x1b)")
        XCTAssertEqual(refusal(Array("abc".utf8)), "not a number or a prefix (digits, then * for a prefix)")
        XCTAssertEqual(refusal(Array("+15#55".utf8)), "not a number or a prefix (digits, then * for a prefix)")
        XCTAssertEqual(refusal([UInt8](repeating: UInt8(ascii: "1"), count: 1 << 20)),
                       "a number of 1048576 bytes (at most 64)")
        XCTAssertNil(refusal(Array("+49 (171) 123-45.67".utf8)))
    }

    /// `deflect NUMBER` and `run NAME` take a word that is no blocked number: `allow` leaves a
    /// deflection's target alone, and `block` counts neither as the plain reject it writes.
    func testADeflectTargetOrACommandNameIsNoBlockedNumber() {
        let rules = "command gate /bin/true\nblock deflect +15559876543 +1900*\nblock run gate +15550001\n"
        let allowed = put("+15559876543", on: .allow, in: rules)
        XCTAssertEqual(allowed.text, rules + "allow +15559876543\n")
        XCTAssertEqual(allowed.change.takenOut, [])
        let blocked = put("+15550001", on: .block, in: rules)
        XCTAssertEqual(blocked.text, rules + "block +15550001\n", "a run rule is no plain reject")
        let cut = put("+19005550100", on: .allow, in: "block deflect +15559876543 +19005550100 +1800*\n")
        XCTAssertEqual(cut.text, "block deflect +15559876543 +1800*\nallow +19005550100\n")
        XCTAssertEqual(decide(cut.text, "+18001234567"), .deflect)
    }
}
