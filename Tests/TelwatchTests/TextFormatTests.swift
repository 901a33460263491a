import CallMonitor
import Glibc
import Pipeline
import TestSupport
import XCTest
@testable import BGRunManager
@testable import telwatch

/// Text output as a person reads it in a terminal: the call line's columns and markers, the
/// escaping of hostile caller ids and names, redaction, and how durations are said.
final class TextFormatTests: UTCTestCase {
    private let callID = "8758f479-318c-412c-8eef-94e245ed8d9f"

    private func call(state: CallState = .incoming, detail: CallDetail? = .ringing,
                      direction: CallDirection = .incoming, number: String = "+15551230001", name: String = "",
                      reason: String? = "incoming-new", key: CallKey = mmKey(0), modem: String = mmModem,
                      multiparty: Bool = false, initial: Bool = false, resumed: Bool = false,
                      firstSeen: Double? = nil, connectedAt: Double? = nil, endedAt: Double? = nil,
                      missed: Bool = false) -> CallSnapshot {
        CallSnapshot(id: callID, key: key, modem: ModemPath(modem), direction: direction, number: number, name: name,
                     state: state, detail: detail, reason: reason.map(CallEndReason.init(word:)), multiparty: multiparty, initial: initial,
                     resumed: resumed, firstSeen: firstSeen ?? now, connectedAt: connectedAt, endedAt: endedAt,
                     missed: missed)
    }

    private func text(_ event: TrackerEvent, redact: Bool = false) -> String? {
        CallEventFormat(schema: EventSchema(redactNumbers: redact)).text(event, time: now, contact: nil)
    }

    private func ringing(number: String = "+15551230001", name: String = "") -> String? {
        text(.transition(call(number: number, name: name), previous: nil))
    }

    // MARK: Columns

    func testAnIncomingCallLineHasItsColumns() {
        XCTAssertEqual(ringing(),
                       "14:20:45.402 incoming     8758f479 ringing  in  +15551230001     modemmanager Modem/0")
    }

    func testColumnsArePaddedAndNeverCut() {
        let dialing = text(.transition(call(state: .dialing, detail: .alerting, direction: .outgoing,
                                            number: "+4930123456789012345"), previous: .dialing))
        XCTAssertEqual(dialing, "14:20:45.402 dialing      8758f479 alerting out +4930123456789012345 modemmanager Modem/0")
        let ended = text(.transition(call(state: .disconnected, detail: nil, direction: .unknown, reason: nil,
                                          endedAt: now), previous: .incoming))
        XCTAssertEqual(ended, "14:20:45.402 disconnected 8758f479 ended    ?   +15551230001     modemmanager Modem/0 "
                       + "after 0.0 s")
    }

    func testAnEmptyNumberIsADash() {
        XCTAssertEqual(ringing(number: ""),
                       "14:20:45.402 incoming     8758f479 ringing  in  -                modemmanager Modem/0")
    }

    func testAnOfonoCallShowsItsModemWithoutTheSlash() {
        let line = text(.transition(call(number: "withheld", key: ofKey(1), modem: ofModem), previous: nil))
        XCTAssertEqual(line, "14:20:45.402 incoming     8758f479 ringing  in  withheld         ofono phonesim")
        let nowhere = text(.transition(call(key: ofKey(1), modem: ""), previous: nil))
        XCTAssertEqual(nowhere, "14:20:45.402 incoming     8758f479 ringing  in  +15551230001     ofono -")
    }

    func testTheAggregateEdgesHaveNoLine() {
        XCTAssertNil(text(.busy(call())))
        XCTAssertNil(text(.idle(call())))
    }

    // MARK: Names, reasons, durations and markers

    func testANameFollowsTheModemAndIsQuotedWhenItHasSpaces() {
        XCTAssertEqual(ringing(name: "Alice"),
                       "14:20:45.402 incoming     8758f479 ringing  in  +15551230001     modemmanager Modem/0 name=Alice")
        XCTAssertEqual(ringing(name: #"Bob "The Builder" Smith"#),
                       "14:20:45.402 incoming     8758f479 ringing  in  +15551230001     modemmanager Modem/0 "
                       + #"name="Bob \"The Builder\" Smith""#)
    }

    func testAnAnsweredCallEndsWithItsReasonAndTalkTime() {
        let line = text(.transition(call(state: .disconnected, detail: nil, reason: "terminated", firstSeen: now - 9,
                                         connectedAt: now - 5.5, endedAt: now), previous: .connected))
        XCTAssertEqual(line, "14:20:45.402 disconnected 8758f479 ended    in  +15551230001     modemmanager Modem/0 "
                       + "reason=terminated talked 5.5 s")
    }

    func testAnUnansweredCallEndsWithHowLongItRangAndThenItsMissedLine() {
        let ended = call(state: .disconnected, detail: nil, reason: "terminated", firstSeen: now - 2, endedAt: now,
                         missed: true)
        XCTAssertEqual(text(.transition(ended, previous: .incoming)),
                       "14:20:45.402 disconnected 8758f479 ended    in  +15551230001     modemmanager Modem/0 "
                       + "reason=terminated after 2.0 s")
        XCTAssertEqual(text(.missed(ended)),
                       "14:20:45.402 missed       8758f479 ended    in  +15551230001     modemmanager Modem/0 "
                       + "reason=terminated", "the missed line does not repeat the time")
    }

    func testALiveCallShowsNoReason() {
        let line = text(.transition(call(state: .connected, detail: .active, reason: "accepted", connectedAt: now),
                                    previous: .incoming))
        XCTAssertEqual(line, "14:20:45.402 connected    8758f479 active   in  +15551230001     modemmanager Modem/0")
        XCTAssertEqual(text(.updated(call(number: "+15551230003"))),
                       "14:20:45.402 updated      8758f479 ringing  in  +15551230003     modemmanager Modem/0")
    }

    func testMarkersForMultipartyLiveAtStartAndLearnedOnResume() {
        let head = "14:20:45.402 connected    8758f479 active   in  +15551230001     modemmanager Modem/0 "
        XCTAssertEqual(text(.transition(call(state: .connected, detail: .active, multiparty: true, initial: true,
                                             connectedAt: now), previous: nil)),
                       head + "multiparty (live at start)")
        XCTAssertEqual(text(.transition(call(state: .connected, detail: .active, resumed: true, connectedAt: now),
                                        previous: .incoming)),
                       head + "(learned on resume)")
        let unseen = call(state: .disconnected, detail: nil, reason: "terminated", resumed: true, endedAt: now,
                          missed: true)
        XCTAssertEqual(text(.transition(unseen, previous: nil)),
                       "14:20:45.402 disconnected 8758f479 ended    in  +15551230001     modemmanager Modem/0 "
                       + "reason=terminated (while asleep, learned on resume)", "no duration: it was not seen")
    }

    // MARK: Acts

    /// An act's line names the call, the act, who asked and what came of it; the number asked
    /// for and the stack's words are anyone's text, escaped.
    func testAnActedLineEscapesTheNumberAndTheStacksWords() {
        let format = CallEventFormat(schema: EventSchema())
        let deflected = ActedCall(kind: .deflect, callID: callID, call: call(), requester: .api, uid: 1000,
                                  number: "+1555\u{1B}[2J", report: CallActReport(.failure(.stackRefused(
                                      name: "org.ofono.Error.Failed", message: "Operation failed\n\u{7}")), elapsed: 0.25))
        XCTAssertEqual(format.text(deflected, time: now),
                       #"14:20:45.402 acted        8758f479 deflect  to=+1555\e[2J by=api uid=1000 stack-refused "#
                       + #"(org.ofono.Error.Failed: Operation failed\n\u{7}) 250 ms"#)
        let tones = ActedCall(kind: .tones, callID: callID, call: call(), requester: .mqtt, uid: nil, number: nil,
                              report: CallActReport(.success(mmKey(0)), elapsed: 1.5, tonesSent: 4))
        XCTAssertEqual(format.text(tones, time: now), "14:20:45.402 acted        8758f479 tones    by=mqtt ok tones=4 1500 ms")
    }

    // MARK: Hostile caller ids and names

    func testControlCharactersInANumberAreWrittenAsEscapes() throws {
        let line = try XCTUnwrap(ringing(number: "+1555\u{1B}[2J\u{7}\n$(id)"))
        XCTAssertEqual(line, #"14:20:45.402 incoming     8758f479 ringing  in  +1555\e[2J\u{7}\n$(id) modemmanager Modem/0"#)
    }

    func testEveryDangerousCharacterIsEscapedInNumbersAndNames() throws {
        let cases: [(String, String)] = [
            ("\u{1B}", #"\e"#), ("\u{7}", #"\u{7}"#), ("\n", #"\n"#), ("\r", #"\r"#), ("\t", #"\t"#),
            ("\\", #"\\"#), ("\u{0}", #"\u{0}"#), ("\u{7F}", #"\u{7f}"#), ("\u{9B}", #"\u{9b}"#),
            ("\u{200B}", #"\u{200b}"#), ("\u{200F}", #"\u{200f}"#), ("\u{202A}", #"\u{202a}"#),
            ("\u{202E}", #"\u{202e}"#), ("\u{2066}", #"\u{2066}"#), ("\u{2069}", #"\u{2069}"#),
        ]
        for (raw, escaped) in cases {
            let numbered = try XCTUnwrap(ringing(number: "1" + raw + "2"))
            XCTAssertTrue(numbered.contains(" 1" + escaped + "2"), "\(raw.debugDescription) in a number: \(numbered)")
            let named = try XCTUnwrap(ringing(name: "A" + raw + "B"))
            XCTAssertTrue(named.hasSuffix(" name=A" + escaped + "B"), "\(raw.debugDescription) in a name: \(named)")
            for line in [numbered, named] {
                XCTAssertFalse(line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                               "nothing raw reaches the terminal: \(line.debugDescription)")
                if raw != "\\" {
                    XCTAssertFalse(line.unicodeScalars.contains(raw.unicodeScalars.first!),
                                   "\(raw.debugDescription) raw in \(line.debugDescription)")
                }
            }
        }
    }

    func testEveryFormatAndSeparatorCharacterIsEscapedLikeTheBidiOverrides() throws {
        // The Arabic letter mark reorders like U+200F; U+FEFF and U+2060 are invisible; U+2028
        // and U+2029 end a line; U+00AD hides; the tags (U+E0001…) are invisible text.
        let cases: [(String, String)] = [
            ("\u{61C}", #"\u{61c}"#), ("\u{FEFF}", #"\u{feff}"#), ("\u{2028}", #"\u{2028}"#),
            ("\u{2029}", #"\u{2029}"#), ("\u{2060}", #"\u{2060}"#), ("\u{AD}", #"\u{ad}"#),
            ("\u{E0041}", #"\u{e0041}"#), ("\u{8}", #"\u{8}"#), ("\u{85}", #"\u{85}"#),
        ]
        for (raw, escaped) in cases {
            let numbered = try XCTUnwrap(ringing(number: "1" + raw + "2"))
            XCTAssertTrue(numbered.contains(" 1" + escaped + "2"), "\(raw.debugDescription) in a number: \(numbered)")
            let named = try XCTUnwrap(ringing(name: "A" + raw + "B"))
            XCTAssertTrue(named.hasSuffix(" name=A" + escaped + "B"), "\(raw.debugDescription) in a name: \(named)")
        }
        XCTAssertEqual(TerminalText.escape("Zoë 📞 日本 \u{A0}"), "Zoë 📞 日本 \u{A0}", "printable text stays as it is")
    }

    func testACallIDOrModemFromTheBusIsEscaped() throws {
        // `telwatch events` rebuilds calls from the service's signal: its id and modem are text.
        let hostile = CallSnapshot(id: "\u{1B}]0;x\u{7}", key: mmKey(0), modem: "/m\u{9B}2J", direction: .incoming,
                                   number: "+1", name: "", state: .incoming, detail: .ringing, reason: nil, multiparty: false,
                                   initial: false, resumed: false, firstSeen: now, connectedAt: nil, endedAt: nil, missed: false)
        let line = try XCTUnwrap(text(.transition(hostile, previous: nil)))
        XCTAssertFalse(line.unicodeScalars.contains { TerminalText.isEscaped($0) }, line.debugDescription)
        XCTAssertTrue(line.contains(#" \e]0;x\u{7} "#) && line.hasSuffix(#"modemmanager m\u{9b}2J"#), line)
    }

    func testPrintableNonASCIIIsShownAsItIs() {
        XCTAssertEqual(ringing(number: "+49301234", name: "Zoë 日本"),
                       "14:20:45.402 incoming     8758f479 ringing  in  +49301234        modemmanager Modem/0 "
                       + #"name="Zoë 日本""#)
    }

    func testAHostileNameCannotForgeAColumnOrALine() throws {
        let line = try XCTUnwrap(ringing(name: "x\nfake 14:20:45.402 incoming"))
        XCTAssertFalse(line.contains("\n"))
        XCTAssertTrue(line.hasSuffix(#" name="x\nfake 14:20:45.402 incoming""#), line)
    }

    // MARK: --redact-numbers

    func testRedactionShowsOnlyTheLastTwoDigits() {
        let line = text(.transition(call(), previous: nil), redact: true)
        XCTAssertEqual(line, "14:20:45.402 incoming     8758f479 ringing  in  **********01     modemmanager Modem/0")
        XCTAssertTrue(text(.transition(call(number: "withheld"), previous: nil), redact: true)?.contains(" withheld ")
                      ?? false)
        XCTAssertTrue(text(.transition(call(number: ""), previous: nil), redact: true)?.contains(" in  -    ") ?? false)
    }

    func testARedactedHostileNumberIsStillEscaped() throws {
        let line = try XCTUnwrap(text(.transition(call(number: "+1555123\u{1B}"), previous: nil), redact: true))
        XCTAssertTrue(line.contains(#" *******3\e "#), line)
    }

    // MARK: Durations

    func testDurationsAreSaidInTheLargestUsefulUnit() {
        let cases: [(Double, String)] = [
            (0, "0.0 s"), (0.04, "0.0 s"), (0.05, "0.1 s"), (7.74, "7.7 s"), (59.9, "59.9 s"), (59.94, "59.9 s"),
            (59.96, "1 min 00 s"), (60, "1 min 00 s"), (60.4, "1 min 00 s"), (65, "1 min 05 s"), (125, "2 min 05 s"),
            (3599, "59 min 59 s"), (3599.4, "59 min 59 s"), (3599.6, "1 h 00 min"), (3600, "1 h 00 min"),
            (3720, "1 h 02 min"), (3659, "1 h 00 min"), (90_000, "25 h 00 min"),
        ]
        for (seconds, said) in cases {
            XCTAssertEqual(Duration.text(seconds), said, "\(seconds) s")
        }
    }

    func testADurationThatIsNoDurationIsAQuestionMark() {
        // Past 31 years: an absurd value from a file (a history row, a run record), never a trap.
        for seconds in [-0.1, -60, .nan, .infinity, -.infinity, 1e19, 1e300, Duration.longest + 1] {
            XCTAssertEqual(Duration.text(seconds), "?", "\(seconds)")
        }
    }

    // MARK: Times and run lines

    func testLocalClockHasMillisecondsCutNotRounded() {
        XCTAssertEqual(Timestamp.localClock(now), "14:20:45.402")
        XCTAssertEqual(Timestamp.localClock(0.0999), "00:00:00.099")
        XCTAssertEqual(Timestamp.localClock(59.9996), "00:00:59.999")
        XCTAssertEqual(Timestamp.localClock(.nan), "00:00:00.000", "a NaN time does not trap")
    }

    func testTheReadmesRunLinesAreWhatTelwatchPrints() {
        let run = RunInfo(id: "a8d63168b2c4e6f0", reason: "incoming", firstHolder: "5379ff9f-0000-4000-8000-000000000000",
                          startedAt: now - 7)
        XCTAssertEqual(ServiceEventFormat.text(RunEvent(time: now, kind: .started(run))),
                       "14:20:45.402 run-started  a8d63168 for incoming call 5379ff9f")
        XCTAssertEqual(ServiceEventFormat.text(RunEvent(time: now, kind: .stopped(run, reason: .idle, duration: 7))),
                       "14:20:45.402 run-stopped  a8d63168 after 7.0 s (idle)")
        XCTAssertEqual(ServiceEventFormat.text(RunEvent(time: now, kind: .expired(run, duration: 14_400))),
                       "14:20:45.402 run-expired  a8d63168 after 4 h 00 min: the lease ran out")
    }
}
