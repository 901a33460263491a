import XCTest
@testable import CallMonitor

/// Numbers and tones come from whoever asks for an act: only dial characters reach a stack, and
/// no number a modem would dial as an emergency call.
final class DialStringTests: XCTestCase {
    private func number(_ raw: String) -> Result<String, DialStringRefusal> {
        Result { () throws(DialStringRefusal) in try DialString(number: raw).value }
    }

    private func tones(_ raw: String) -> Result<String, DialStringRefusal> {
        Result { () throws(DialStringRefusal) in try DialString(tones: raw).value }
    }

    func testNumbersKeepDialCharactersAndDropFormatting() {
        XCTAssertEqual(number("+1 (555) 987-65.43"), .success("+15559876543"))
        XCTAssertEqual(number("*31#0123"), .success("*31#0123"))
        XCTAssertEqual(number("#31# +44 20"), .success("#31#+4420"))
        XCTAssertEqual(number("0800"), .success("0800"))
    }

    func testNumbersRefuseWhatAModemWouldTakeForACommandOrAPause() {
        XCTAssertEqual(number("+1555;+CFUN=0"), .failure(.forbidden(0x3B)))
        XCTAssertEqual(number("+1555\n"), .failure(.forbidden(0x0A)))
        XCTAssertEqual(number("+1555\r+CFUN=0"), .failure(.forbidden(0x0D)))
        XCTAssertEqual(number("+1555\0"), .failure(.forbidden(0)))
        XCTAssertEqual(number("+1555,1"), .failure(.forbidden(0x2C)))
        XCTAssertEqual(number("+1555p1"), .failure(.forbidden(0x70)))
        XCTAssertEqual(number("+1555w1"), .failure(.forbidden(0x77)))
        XCTAssertEqual(number("\"+1555\""), .failure(.forbidden(0x22)))
        XCTAssertEqual(number("+1555>1"), .failure(.forbidden(0x3E)))
        XCTAssertEqual(number("٣٤٥"), .failure(.forbidden(0x663)), "digits of other scripts are not dial characters")
        XCTAssertEqual(number("1+555"), .failure(.plusNotFirst))
        XCTAssertEqual(number("++1555"), .failure(.plusNotFirst))
        XCTAssertEqual(number("*21#+1555"), .failure(.plusNotFirst))
        XCTAssertEqual(number(" - "), .failure(.empty))
        XCTAssertEqual(number(""), .failure(.empty))
        XCTAssertEqual(number(String(repeating: "1", count: 32)), .success(String(repeating: "1", count: 32)))
        XCTAssertEqual(number(String(repeating: "1", count: 33)), .failure(.tooLong(limit: 32)))
        XCTAssertEqual(number(String(repeating: " ", count: 200) + "1"), .failure(.tooLong(limit: 32)),
                       "long input is refused unread")
    }

    func testTonesAreTheSixteenDTMFTones() {
        XCTAssertEqual(tones("0123456789*#ABCD"), .success("0123456789*#ABCD"))
        XCTAssertEqual(tones("abcd"), .success("ABCD"))
        XCTAssertEqual(tones("1;+CFUN=0"), .failure(.forbidden(0x3B)))
        XCTAssertEqual(tones("1 2"), .failure(.forbidden(0x20)))
        XCTAssertEqual(tones("+1"), .failure(.forbidden(0x2B)))
        XCTAssertEqual(tones("1p2"), .failure(.forbidden(0x70)))
        XCTAssertEqual(tones("E"), .failure(.forbidden(0x45)))
        XCTAssertEqual(tones(String(repeating: "5", count: 65)), .failure(.tooLong(limit: 64)))
    }

    func testRefusalsNameTheCharacterWithoutPrintingIt() {
        XCTAssertEqual(DialStringRefusal.forbidden(0x3B).description, "';' is not a dial character")
        XCTAssertEqual(DialStringRefusal.forbidden(0x0A).description, "U+000A is not a dial character")
        XCTAssertEqual(DialStringRefusal.forbidden(0x27).description, "U+0027 is not a dial character")
    }

    func testEmergencyNumbersAsAModemWouldDialThem() throws {
        func emergency(_ raw: String, listed: Set<String> = []) throws -> Bool {
            EmergencyDial.isEmergency(try DialString(number: raw), listed: listed)
        }
        for raw in ["112", "911", "+112", "112#", "*112", "911#", "*31#112", "#31#911", "00112", "1-1-2", "(911)",
                    "000", "999", "17"] {
            XCTAssertTrue(try emergency(raw), raw)
        }
        XCTAssertTrue(try emergency("+1 333", listed: ["1333"]), "a number the stack lists for its SIM or network")
        for raw in ["+15551234", "1120", "0112", "+4411200", "*31#+15551234", "#31#"] {
            XCTAssertFalse(try emergency(raw), raw)
        }
    }
}
