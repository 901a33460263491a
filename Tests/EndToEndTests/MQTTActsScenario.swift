import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// Acts asked over MQTT (`--mqtt-commands`, docs/mqtt.md "Commands") on the real daemon: Debian's
/// mosquitto carries the command, telwatch acts through the stack, and the simulated modem sees
/// the AT command; a hostile payload is refused on stderr and the modem sees nothing of it.
/// Written once for both daemons.
extension EndToEndTestCase {
    static let mqttRoot = "telwatch/e2e"

    /// The broker, telwatch's config for it, and a subscriber on all of telwatch's topics; telwatch
    /// is up once the subscriber has seen `online` (its command subscription goes before it).
    private func startWithMQTT() throws -> (broker: MosquittoBroker, sub: TestProcess, events: TestProcess) {
        let directory = world.fixture.directory + "/mqtt"
        mkdir(directory, 0o700)
        let broker = try MosquittoBroker(fixture: world.fixture, directory: directory)
        let config = world.fixture.directory + "/mqtt.conf"
        try Files.write(config, "mqtt = \(broker.url)\nmqtt-topic = \(Self.mqttRoot)\nmqtt-commands = true\n"
                                + "mqtt-reconnect-max = 1\n")
        let sub = try broker.subscribe([Self.mqttRoot + "/status", Self.mqttRoot + "/ringing-call"])
        let events = try broker.subscribe([Self.mqttRoot + "/events"])
        try startDaemonAndTelwatch(["--config", config])
        // The retained state goes before `online`.
        XCTAssertTrue(ringingCall(sub, "offline"), "no call rings yet")
        XCTAssertNotNil(sub.nextMessage(on: Self.mqttRoot + "/status", where: { $0.payload == "online" }),
                        "telwatch never said online:\n\(world.telwatchLog)")
        return (broker, sub, events)
    }

    private func command(_ broker: MosquittoBroker, _ text: String) throws {
        try broker.publish(Self.mqttRoot + "/command", text)
    }

    /// telwatch's stderr says `why` of a refused command (bounded, woken by the log's writes).
    private func refusal(_ why: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let process = world.telwatch, let path = process.logPath else { return XCTFail("no telwatch", file: file, line: line) }
        let said = Files.waitUntil(path, timeout: 10) {
            process.log().contains("a command on \(Self.mqttRoot)/command was refused: \(why)")
        }
        XCTAssertTrue(said, "no refusal '\(why)':\n\(process.log())", file: file, line: line)
    }

    /// The `acted` events telwatch printed, as `KIND by=REQUESTER result=RESULT`.
    private func acted() -> [String] {
        world.transcript.compactMap(JSONLine.object).filter { $0["event"] as? String == "acted" }.map {
            "\($0["act"] as? String ?? "?") by=\($0["by"] as? String ?? "?") result=\($0["result"] as? String ?? "?")"
        }
    }

    private func ringingCall(_ sub: TestProcess, _ payload: String) -> Bool {
        sub.nextMessage(on: Self.mqttRoot + "/ringing-call", where: { $0.payload == payload }) != nil
    }

    func mqttCommandsReachTheModem() throws {
        let (broker, sub, events) = try startWithMQTT()
        try command(broker, "reject ringing")
        refusal("reject ringing: no call rings")

        // Answer, by the call's id: ATA.
        var mark = try modem.mark()
        try modem.ring("+15551234")
        _ = world.lines(through: line("incoming", "A", detail: "ringing", dir: "incoming", number: "+15551234", live: 1))
        XCTAssertTrue(ringingCall(sub, "online"), "one call rings")
        let id = try XCTUnwrap(world.callEvents("A").first?["call_id"] as? String)
        try command(broker, "answer \(id)")
        try modem.awaitCommand("^ATA$", since: mark)
        _ = world.lines(through: line("connected", "A", prev: "incoming", detail: "active", dir: "incoming",
                                      number: "+15551234", live: 1))
        XCTAssertTrue(ringingCall(sub, "offline"), "the call is in talk")

        // Tones, in order: ModemManager one AT+VTS per tone, oFono all in one line.
        mark = try modem.mark()
        try command(broker, "tones \(id) 1#9")
        if kind == .modemManager {
            var after = mark
            for tone in ["1", "#", "9"] {
                try modem.awaitCommand("^AT\\+VTS=\(tone)$", since: after)
                after = try XCTUnwrap(try modem.seen("^AT\\+VTS=\(tone)$", since: after)).count
            }
        } else {
            try modem.awaitCommand("^AT\\+VTS=1;\\+VTS=#;\\+VTS=9$", since: mark)
        }

        // oFono answers SendTones once the tones have played, and refuses a hang-up before that
        // (Error.InProgress): the tones' answer first.
        while acted().count < 2, !world.lines(until: { $0.hasPrefix("acted ") }, timeout: 10).isEmpty {}
        XCTAssertEqual(acted().last, "tones by=mqtt result=ok")

        // Hostile payloads: refused before any stack sees them.
        let hostile = try modem.mark()
        try command(broker, "tones \(id) 1;+CFUN=0")
        refusal("tones: ';' is not a dial character")
        // Said once for every kind of bad tones (a flood of them is one line): never printed.
        try command(broker, "tones \(id) 1\u{1B}+CFUN=0")
        try command(broker, "dial +15550123")
        refusal("dial is not taken over MQTT")
        try command(broker, "deflect \(id) +15559876")
        try command(broker, "hangup \(id) " + String(repeating: "9", count: 200))
        refusal("a command is UTF-8 text of at most 128 bytes")
        XCTAssertFalse(world.telwatch?.log().contains("\u{1B}") ?? true, "the escape never reached stderr")

        // Hang up, by the call's id: the hang-up comes after every refusal, so what the modem
        // saw before it is all it will see of them.
        mark = try modem.mark()
        try command(broker, "hangup \(id)")
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        _ = world.lines(through: runStopped)
        for pattern in ["CFUN", "^ATD", "CTFR", "VTS"] {
            XCTAssertNil(try modem.seen(pattern, since: hostile), "\(pattern): \(modem.dialogue)")
        }

        // Reject the one call ringing, as Home Assistant's button does.
        mark = try modem.mark()
        try modem.ring("+15550002")
        _ = world.lines(through: line("incoming", "B", detail: "ringing", dir: "incoming", number: "+15550002", live: 1))
        XCTAssertTrue(ringingCall(sub, "online"))
        try command(broker, "reject ringing")
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        let ended = world.lines(through: runStopped)
        XCTAssertTrue(ended.contains { $0.hasPrefix("disconnected B ") }, "\(ended)")
        XCTAssertTrue(ringingCall(sub, "offline"))
        XCTAssertEqual(try modem.calls(), [])

        // Each act's event comes once the stack answered: perhaps after the call's end.
        while acted().count < 4, !world.lines(until: { $0.hasPrefix("acted ") }, timeout: 10).isEmpty {}
        XCTAssertEqual(acted(), ["answer by=mqtt result=ok", "tones by=mqtt result=ok", "hangup by=mqtt result=ok",
                                 "hangup by=mqtt result=ok"], "each act once, said as MQTT's")
        var published: [String] = []
        while published.count < 4, let message = events.nextMessage(on: Self.mqttRoot + "/events", where: {
            $0.object?["event"] as? String == "acted"
        }) {
            published.append("\(message.object?["act"] as? String ?? "?") by=\(message.object?["by"] as? String ?? "?")")
        }
        XCTAssertEqual(published, ["answer by=mqtt", "tones by=mqtt", "hangup by=mqtt", "hangup by=mqtt"],
                       "the acted events reach MQTT too")
        world.stopTelwatch()
    }

    /// The time from publishing a command (`mosquitto_pub` started: its own start-up, a few
    /// milliseconds, is in the figure) to its AT command at the modem, over `rounds` of each act;
    /// printed. The suite runs three rounds (every act done each time, within 5 s); docs/mqtt.md's
    /// figures are from `rounds: 20`.
    func mqttActsReachTheModemInTime(rounds: Int = 3) throws {
        let (broker, sub, events) = try startWithMQTT()
        // Only TOPIC/calls is read here: a subscriber nobody reads would fill its pipe.
        sub.terminate()
        events.terminate()
        let calls = try broker.subscribe([Self.mqttRoot + "/calls"])
        var delays: [String: [Double]] = [:]
        var acts = 0
        func timed(_ name: String, _ text: String, _ pattern: String) throws {
            let mark = try modem.mark()
            let asked = monotonicNow()
            try command(broker, text)
            try modem.awaitCommand(pattern, since: mark)
            let seen = try XCTUnwrap(try modem.seen(pattern, since: mark))
            delays[name, default: []].append(seen.at - asked)
            acts += 1
        }
        /// The id of the call to `number` once TOPIC/calls lists it in `state`.
        func listed(_ number: String, _ state: String) throws -> String {
            var id: String?
            _ = calls.nextMessage(on: Self.mqttRoot + "/calls", where: { message in
                let list = (try? JSONSerialization.jsonObject(with: Data(message.payload.utf8))) as? [[String: Any]]
                id = list?.first { $0["number"] as? String == number && $0["state"] as? String == state }?["call_id"] as? String
                return id != nil
            })
            return try XCTUnwrap(id, "\(number) never \(state) on TOPIC/calls")
        }
        func idle() {
            XCTAssertNotNil(calls.nextMessage(on: Self.mqttRoot + "/calls", where: { $0.payload == "[]" }), "no call left")
        }
        /// Every act's `acted` line read (the stack answered it), so the next act does not race it;
        /// reading them keeps telwatch's stdout drained.
        func answered() {
            while acted().count < acts, !world.lines(until: { $0.hasPrefix("acted ") }, timeout: 10).isEmpty {}
        }
        for round in 0..<rounds {
            broker.drainLog()
            let number = "+1555200\(String(format: "%04d", round))"
            try modem.ring(number)
            let id = try listed(number, "incoming")
            try timed("answer", "answer \(id)", "^ATA$")
            _ = try listed(number, "connected")
            try timed("tones", "tones \(id) 5", "^AT\\+VTS=5$")
            answered()
            try timed("hangup", "hangup \(id)", Self.hangUpCommand)
            idle()

            try modem.ring(number)
            _ = try listed(number, "incoming")
            try timed("reject ringing", "reject ringing", Self.hangUpCommand)
            idle()
            answered()
        }
        for name in ["answer", "tones", "hangup", "reject ringing"] {
            let sorted = (delays[name] ?? []).sorted()
            XCTAssertEqual(sorted.count, rounds, name)
            guard let max = sorted.last else { continue }
            print(String(format: "mqtt-act-delay %@ %@ publish-to-modem p50=%.1fms max=%.1fms n=%d",
                         daemon.backend, name, sorted[sorted.count / 2] * 1000, max * 1000, sorted.count))
            XCTAssertLessThan(max, 5, "\(name): the modem saw its command within 5 s every time")
        }
        XCTAssertEqual(acted().count, 4 * rounds)
        XCTAssertEqual(acted().filter { !$0.hasSuffix("by=mqtt result=ok") }, [], "every act done, asked by MQTT")
    }
}
