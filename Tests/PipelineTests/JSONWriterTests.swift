import Foundation
import Pipeline
import TestSupport
import XCTest

/// `JSONObject`, the writer of every JSON line: escaping, numbers, null, times and key order,
/// checked byte for byte and read back by two independent JSON readers.
final class JSONWriterTests: XCTestCase {
    private func line(_ build: (inout JSONObject) -> Void) -> String {
        var object = JSONObject()
        build(&object)
        return object.line
    }

    /// `{"v":VALUE}` for one string.
    private func quoted(_ value: String) -> String {
        line { $0.add("v", value) }
    }

    /// The string a strict reader and Foundation's both get back from the line.
    private func assertReadsBack(_ value: String, file: StaticString = #filePath, line number: UInt = #line) {
        let text = quoted(value)
        XCTAssertEqual(try JSONValue.parse(text)["v"], .string(value), text, file: file, line: number)
        XCTAssertEqual(JSONLine.object(text)?["v"] as? String, value, text, file: file, line: number)
    }

    // MARK: Strings

    func testQuotesAndBackslashesAreEscaped() {
        XCTAssertEqual(quoted(#"say "hi" \ bye"#), #"{"v":"say \"hi\" \\ bye"}"#)
        XCTAssertEqual(quoted(#"\""#), #"{"v":"\\\""}"#)
        XCTAssertEqual(quoted("/path/ok"), #"{"v":"/path/ok"}"#, "a slash needs no escape")
        assertReadsBack(#"'; rm -rf ~ #"\$(id)"#)
    }

    func testEveryControlCharacterIsEscaped() {
        let short: [UInt32: String] = [0x0A: #"\n"#, 0x0D: #"\r"#, 0x09: #"\t"#]
        for code in UInt32(0)..<0x20 {
            let scalar = Unicode.Scalar(code)!
            let hex = String(code, radix: 16)
            let expected = short[code] ?? #"\u00"# + (hex.count == 1 ? "0" + hex : hex)
            XCTAssertEqual(quoted("a" + String(scalar) + "b"), #"{"v":"a"# + expected + #"b"}"#, "U+\(hex)")
            assertReadsBack("a" + String(scalar) + "b")
        }
    }

    func testDeleteAndC1ControlsAreEscaped() {
        XCTAssertEqual(quoted("\u{7F}"), #"{"v":"\u007f"}"#)
        for code in UInt32(0x80)...0x9F {
            let scalar = Unicode.Scalar(code)!
            XCTAssertEqual(quoted(String(scalar)), #"{"v":"\u00"# + String(code, radix: 16) + #""}"#)
            assertReadsBack("x" + String(scalar))
        }
        XCTAssertEqual(quoted("+1555\u{9B}2J"), #"{"v":"+1555\u009b2J"}"#, "a C1 CSI never reaches a terminal raw")
    }

    func testLineAndParagraphSeparatorsAreEscaped() {
        XCTAssertEqual(quoted("a\u{2028}b\u{2029}c"), #"{"v":"a\u2028b\u2029c"}"#)
        assertReadsBack("a\u{2028}b\u{2029}c")
    }

    func testOtherNonASCIIPassesThroughAsUTF8() {
        for text in ["Zoë", "José Müller", "日本語", "📞 Mom", "\u{A0}", "\u{202E}evil", "zero\u{FEFF}width", "Ω≈ç√"] {
            XCTAssertEqual(quoted(text), #"{"v":""# + text + #""}"#, text.debugDescription)
            assertReadsBack(text)
        }
        XCTAssertEqual(quoted("é\n\u{1B}[31m日"), #"{"v":"é\n\u001b[31m日"}"#)
    }

    func testAnEmptyStringAndNullDiffer() {
        XCTAssertEqual(line { $0.add("a", ""); $0.add("b", nil as String?) }, #"{"a":"","b":null}"#)
    }

    func testEveryOutputIsOneLine() {
        var all = ""
        for code in UInt32(0)...0x2FF { all.unicodeScalars.append(Unicode.Scalar(code)!) }
        all += "\u{2028}\u{2029}\u{85}"
        let text = quoted(all)
        XCTAssertFalse(text.utf8.contains(0x0A))
        XCTAssertFalse(text.utf8.contains(0x0D))
        XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        assertReadsBack(all)
    }

    // MARK: Numbers, booleans, null

    func testIntegersAreWrittenExactly() {
        for value in [0, 1, -1, 42, 1_000_000, Int.max, Int.min, Int.min + 1] {
            XCTAssertEqual(line { $0.add("n", value) }, #"{"n":"# + String(value) + "}")
        }
    }

    func testSecondsHaveExactlyThreeDecimalsRoundedToTheMillisecond() {
        let cases: [(Double?, String)] = [
            (0, "0.000"), (1.5, "1.500"), (7, "7.000"), (0.0004, "0.000"), (0.0006, "0.001"), (2.0625, "2.063"),
            (-2.25, "-2.250"), (-0.0004, "0.000"), (-0.5, "-0.500"), (1_234_567.891, "1234567.891"),
            (14_400, "14400.000"), (nil, "null"), (.nan, "null"), (.infinity, "null"), (-.infinity, "null"),
            (1e15, "null"),
        ]
        for (value, expected) in cases {
            let text = line { $0.add("s", seconds: value) }
            XCTAssertEqual(text, #"{"s":"# + expected + "}", "\(String(describing: value))")
            XCTAssertNotNil(try? JSONValue.parse(text), text)
        }
    }

    func testBooleansAreJSONBooleans() {
        let text = line { $0.add("yes", true); $0.add("no", false) }
        XCTAssertEqual(text, #"{"yes":true,"no":false}"#)
        XCTAssertEqual(try JSONValue.parse(text)["yes"], .bool(true))
    }

    // MARK: Times

    func testTimesAreRFC3339UTCWithMilliseconds() {
        let cases: [(Double?, String)] = [
            (0, #""1970-01-01T00:00:00.000Z""#),
            (1_795_962_045.402, #""2026-11-29T14:20:45.402Z""#),
            (1_709_251_199.999, #""2024-02-29T23:59:59.999Z""#),
            (1_709_251_200, #""2024-03-01T00:00:00.000Z""#),
            (0.0009, #""1970-01-01T00:00:00.000Z""#),
            (253_402_300_799.5, #""9999-12-31T23:59:59.500Z""#),
            (-62_167_219_200, #""0000-01-01T00:00:00.000Z""#),
            (nil, "null"),
        ]
        for (value, expected) in cases {
            XCTAssertEqual(line { $0.add("t", time: value) }, #"{"t":"# + expected + "}", "\(String(describing: value))")
        }
    }

    func testAFractionOfAMillisecondIsCutNotRounded() {
        // A clock at 12.9996 s has not reached 13 s yet.
        XCTAssertEqual(line { $0.add("t", time: 12.9996) }, #"{"t":"1970-01-01T00:00:12.999Z"}"#)
    }

    func testTimesBefore1970KeepTheirFraction() {
        // A record's start read back from the state file may say anything; it must still be a time.
        XCTAssertEqual(line { $0.add("t", time: -1.5) }, #"{"t":"1969-12-31T23:59:58.500Z"}"#)
        XCTAssertEqual(line { $0.add("t", time: -0.001) }, #"{"t":"1969-12-31T23:59:59.999Z"}"#)
        XCTAssertEqual(line { $0.add("t", time: -86_400) }, #"{"t":"1969-12-31T00:00:00.000Z"}"#)
    }

    func testTimesNoRFC3339YearCanHoldAreTheEpochNotACrash() {
        for value in [Double.nan, .infinity, -.infinity, 1e12, -1e12, 253_402_300_800, -62_167_219_201, 1e300] {
            XCTAssertEqual(line { $0.add("t", time: value) }, #"{"t":"1970-01-01T00:00:00.000Z"}"#, "\(value)")
        }
    }

    // MARK: Objects

    func testKeysStayInTheOrderTheyWereAdded() throws {
        let text = line {
            $0.add("zulu", "z")
            $0.add("alpha", 1)
            $0.add("mike", true)
            $0.add("bravo", seconds: 1)
            $0.add("echo", time: 0)
            $0.add("alpha2", nil as String?)
        }
        XCTAssertEqual(text, #"{"zulu":"z","alpha":1,"mike":true,"bravo":1.000,"echo":"1970-01-01T00:00:00.000Z","alpha2":null}"#)
        XCTAssertEqual(try JSONValue.parse(text).keys, ["zulu", "alpha", "mike", "bravo", "echo", "alpha2"])
    }

    func testAnEmptyObjectAndTheLineBytes() {
        XCTAssertEqual(JSONObject().line, "{}")
        var object = JSONObject()
        object.add("k", "v")
        XCTAssertEqual(object.lineBytes, Array(#"{"k":"v"}"#.utf8))
        XCTAssertEqual(object.line, String(decoding: object.lineBytes, as: UTF8.self))
        XCTAssertEqual(object.line, #"{"k":"v"}"#, "reading the line does not close the object for good")
    }

    func testQuoteIsTheSameEscapingOnItsOwn() {
        XCTAssertEqual(JSONObject.quote("a\"b\u{1}é\u{2028}"), #""a\"b\u0001é\u2028""#)
    }
}

final class RFC3339SecondsTests: XCTestCase {
    func testTheCachedSecondsWriteWhatTheWriterWrites() {
        let cache = RFC3339Seconds()
        let moments: [Double] = [1_764_567_890.123, 1_764_567_890.999, 1_764_567_891.0, 1_764_567_890.5, 0, 0.001,
                                 1_764_567_999.042, -1.5, .nan, 1e300, 951_782_400.25]
        for moment in moments + moments {
            var cached = JSONObject(seconds: cache)
            var plain = JSONObject()
            cached.add("t", time: moment)
            plain.add("t", time: moment)
            XCTAssertEqual(cached.line, plain.line, "\(moment)")
        }
    }
}
