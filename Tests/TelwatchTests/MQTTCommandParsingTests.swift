import CallMonitor
import Pipeline
import TestSupport
import XCTest
@testable import MQTTExport

/// What `TOPIC/command` takes (docs/mqtt.md, "Commands"), and what Home Assistant is told about
/// the buttons that send it: the payload is whatever anyone the broker lets publish sent, so
/// everything else is refused, in words that never carry the payload's own characters.
final class MQTTCommandParsingTests: XCTestCase {
    static let id = "3f2a1c9e-0b4d-4e6f-8a1b-2c3d4e5f6a7b"

    func parse(_ text: String, retained: Bool = false) -> Result<MQTTCommand, MQTTCommand.Refusal> {
        MQTTCommand.parse(MQTTExport.MQTTMessage(topic: "t/command", payload: Array(text.utf8), retained: retained))
    }

    func command(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> MQTTCommand? {
        switch parse(text) {
        case .success(let command): return command
        case .failure(let refusal):
            XCTFail("\(text): refused (\(refusal))", file: file, line: line)
            return nil
        }
    }

    func refusal(_ text: String, retained: Bool = false) -> MQTTCommand.Refusal? {
        if case .failure(let refusal) = parse(text, retained: retained) { return refusal }
        return nil
    }

    func testEachVerbTakesACallIDOrTheRingingCall() {
        let id = Self.id
        XCTAssertEqual(command("silence \(id)"), MQTTCommand(verb: .silence, call: .id(id), action: .silence))
        XCTAssertEqual(command("silence ringing"), MQTTCommand(verb: .silence, call: .ringing, action: .silence))
        XCTAssertEqual(command("hangup \(id.uppercased())"), MQTTCommand(verb: .hangup, call: .id(id), action: .act(.hangUp)))
        XCTAssertEqual(command("reject ringing"), MQTTCommand(verb: .reject, call: .ringing, action: .act(.hangUp)))
        XCTAssertEqual(command("reject \(id)"), MQTTCommand(verb: .reject, call: .id(id), action: .act(.hangUp)))
        XCTAssertEqual(command(" answer\t\(id)\r\n"), MQTTCommand(verb: .answer, call: .id(id), action: .act(.answer)))
        XCTAssertEqual(command("answer ringing"), MQTTCommand(verb: .answer, call: .ringing, action: .act(.answer)))
        XCTAssertEqual(command("tones \(id) 12#*ad"),
                       MQTTCommand(verb: .tones, call: .id(id), action: .act(.sendTones("12#*AD"))))
    }

    func testHomeAssistantsButtonPayloadsAreCommands() {
        XCTAssertEqual(command(MQTTCommand.pressPayload(.reject))?.action, .act(.hangUp))
        XCTAssertEqual(command(MQTTCommand.pressPayload(.silence))?.action, .silence)
    }

    func testWrongWordsAreRefusedSayingWhatIsTaken() {
        let id = Self.id
        XCTAssertEqual(refusal("hangup"), .malformed(.hangup))
        XCTAssertEqual(refusal("hangup \(id) now"), .malformed(.hangup))
        XCTAssertEqual(refusal("answer 42"), .malformed(.answer))
        XCTAssertEqual(refusal("silence everything"), .malformed(.silence))
        XCTAssertEqual(refusal("tones \(id)"), .malformed(.tones))
        XCTAssertEqual(refusal("tones ringing 1"), .malformed(.tones), "a ringing call takes no tones")
        XCTAssertEqual(refusal("HANGUP \(id)"), .notACommand)
        XCTAssertEqual(refusal("reboot"), .notACommand)
        XCTAssertEqual(refusal(""), .notACommand)
        XCTAssertEqual(refusal("silence \(id)", retained: true), .retained)
        XCTAssertEqual(refusal("tones \(id) 1 2").map { "\($0)" }, "tones takes `tones CALL_ID DIGITS`")
        XCTAssertEqual(refusal("answer x").map { "\($0)" }, "answer takes `answer CALL_ID` or `answer ringing`")
    }

    /// Dial and deflect reach a number of the sender's choosing: never over MQTT, and said so.
    func testDialAndDeflectAreNotTakenOverMQTT() {
        XCTAssertEqual(refusal("dial +15550123"), .notOverMQTT(.dial))
        XCTAssertEqual(refusal("deflect \(Self.id) +15550123"), .notOverMQTT(.deflect))
        XCTAssertTrue("\(MQTTCommand.Refusal.notOverMQTT(.dial))".contains("not taken over MQTT"))
    }

    /// A command in the tones, a control character, a pause, too many: refused before any stack
    /// sees them, in words that name a character by its code point, never print it.
    func testHostileTonesAreRefusedAndNeverEchoed() {
        let id = Self.id
        XCTAssertEqual(refusal("tones \(id) 1;+CFUN=0"), .tones(.forbidden(0x3B)))
        XCTAssertEqual(refusal("tones \(id) 1,2"), .tones(.forbidden(0x2C)))
        XCTAssertEqual(refusal("tones \(id) 1p2"), .tones(.forbidden(0x70)))
        XCTAssertEqual(refusal("tones \(id) 12\u{1B}[2J"), .tones(.forbidden(0x1B)))
        XCTAssertEqual(refusal("tones \(id) 1\u{202E}9"), .tones(.forbidden(0x202E)))
        XCTAssertEqual(refusal("tones \(id) " + String(repeating: "1", count: 65)), .tones(.tooLong(limit: 64)))
        let escape = "\(refusal("tones \(id) 12\u{1B}[2J")!)"
        XCTAssertEqual(escape, "tones: U+001B is not a dial character")
        XCTAssertFalse(escape.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        XCTAssertEqual("\(refusal("tones \(id) 1\u{202E}9")!)", "tones: U+202E is not a dial character")
    }

    func testAPayloadOverTheBoundOrNotUTF8IsRefusedUnread() {
        XCTAssertEqual(refusal("hangup " + String(repeating: " ", count: 200) + Self.id), .notText)
        let notUTF8 = MQTTExport.MQTTMessage(topic: "t/command", payload: Array("hangup ".utf8) + [0xFF, 0xFE], retained: false)
        guard case .failure(.notText) = MQTTCommand.parse(notUTF8) else { return XCTFail("taken") }
        XCTAssertEqual("\(MQTTCommand.Refusal.notText)", "a command is UTF-8 text of at most 128 bytes")
    }

    /// The stack's own words in a refusal are one line, whatever they carry.
    func testTheStacksWordsArePrintedEscaped() {
        let (why, kind) = MQTTCommandTaker.words(.stackRefused(name: "org.example.Error.Failed",
                                                               message: "no\ncarrier\u{1B}[31m\u{202E}"), id: Self.id)
        XCTAssertEqual(why, "the stack refused it: org.example.Error.Failed: no\\u{A}carrier\\u{1B}[31m\\u{202E}")
        XCTAssertEqual(kind, "stack refused")
    }

    // MARK: Home Assistant's buttons

    func discovery(commands: Bool) -> [String: [String: Any]] {
        var settings = MQTTSettings(broker: MQTTBroker(host: "127.0.0.1", port: 1883, tls: false), topic: "telwatch/phone", hostName: "phone")
        settings.commands = commands
        let discovery = HomeAssistantDiscovery(settings: settings,
                                               topics: MQTTTopics(root: "telwatch/phone", discoveryPrefix: "homeassistant"),
                                               redactNumbers: false, countsMissedCalls: false, countsBlockedCalls: false)
        var configs: [String: [String: Any]] = [:]
        for (topic, payload) in discovery.configs() where topic.contains("/button/") {
            configs[topic] = payload.isEmpty ? [:] : JSONLine.object(payload)
        }
        return configs
    }

    func testTheButtonsSendTheirCommandOnTheRingingCallAndAreAvailableOnlyWhileOneRings() throws {
        let configs = discovery(commands: true)
        XCTAssertEqual(Set(configs.keys), ["homeassistant/button/telwatch_phone/reject/config",
                                           "homeassistant/button/telwatch_phone/silence/config"])
        let reject = try XCTUnwrap(configs["homeassistant/button/telwatch_phone/reject/config"])
        XCTAssertEqual(reject["name"] as? String, "Reject")
        XCTAssertEqual(reject["command_topic"] as? String, "telwatch/phone/command")
        XCTAssertEqual(reject["payload_press"] as? String, "reject ringing")
        XCTAssertEqual(reject["availability_mode"] as? String, "all")
        let availability = try XCTUnwrap(reject["availability"] as? [[String: String]])
        XCTAssertEqual(availability.map { $0["topic"] }, ["telwatch/phone/status", "telwatch/phone/ringing-call"])
        XCTAssertTrue(availability.allSatisfy { $0["payload_available"] == "online" && $0["payload_not_available"] == "offline" })
        XCTAssertNil(reject["availability_topic"], "Home Assistant takes one of availability and availability_topic")
        XCTAssertNil(reject["state_topic"])
        XCTAssertEqual(configs["homeassistant/button/telwatch_phone/silence/config"]?["payload_press"] as? String,
                       "silence ringing")
    }

    func testWithoutCommandsTheButtonsAreRemoved() {
        let configs = discovery(commands: false)
        XCTAssertEqual(configs.count, 2)
        XCTAssertTrue(configs.values.allSatisfy(\.isEmpty), "an empty config removes the entity")
    }

    // MARK: The ringing call

    func snapshot(_ id: String, _ state: CallState, path: Int) -> CallSnapshot {
        CallSnapshot(id: id, key: mmKey(path), modem: ModemPath(mmModem), direction: .incoming, number: "+1555000\(path)",
                     name: "", state: state, detail: state == .incoming ? .ringing : .active, firstSeen: 1_780_000_000)
    }

    /// `TOPIC/ringing-call` is `online` while exactly one call rings (what `reject ringing` names).
    func testTheRingingCallTopicIsOnlineWhileExactlyOneCallRings() {
        var state = MQTTRetainedState(topics: MQTTTopics(root: "t", discoveryPrefix: "homeassistant"), schema: EventSchema())
        func ringingCall() -> String? {
            state.retainedMessages().first { $0.topic == "t/ringing-call" }.map { String(decoding: $0.payload, as: UTF8.self) }
        }
        func note(_ call: CallSnapshot, previous: CallState?) {
            state.note(Delivery(.calls([.transition(call, previous: previous)], time: 1_780_000_000), liveCalls: 1))
        }
        XCTAssertNil(ringingCall(), "not published without commands")
        state.takesCommands = true
        XCTAssertEqual(ringingCall(), "offline")
        note(snapshot("a", .incoming, path: 0), previous: nil)
        XCTAssertEqual(ringingCall(), "online")
        XCTAssertEqual(state.ringingCalls.map(\.id), ["a"])
        note(snapshot("b", .incoming, path: 1), previous: nil)
        XCTAssertEqual(ringingCall(), "offline", "two ring: neither is `the` ringing call")
        note(snapshot("a", .connected, path: 0), previous: .incoming)
        XCTAssertEqual(ringingCall(), "online", "a call waiting beside one in talk")
        XCTAssertEqual(state.ringingCalls.map(\.id), ["b"])
        note(snapshot("b", .disconnected, path: 1), previous: .incoming)
        XCTAssertEqual(ringingCall(), "offline")
    }
}
