import DBus
import Foundation
import Glibc
import Loop
import MQTTExport
import TestSupport
import XCTest

/// `telwatch --mqtt` against Debian's real `mosquitto` on 127.0.0.1, read by `mosquitto_sub`.
final class MQTTCommandTests: CommandTestCase {
    static let root = "telwatch/test"
    static let events = root + "/events"
    static let callInterface = "org.freedesktop.ModemManager1.Call"
    /// The host's part of the discovery node (`telwatch_HOST`).
    static var nodeSuffix: String {
        String(MQTTSettings.localHostName().map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") ? $0 : "_" })
    }
    var broker: MosquittoBroker!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let directory = logind.directory + "/mqtt"
        mkdir(directory, 0o700)
        broker = try MosquittoBroker(fixture: fixture, directory: directory)
    }

    /// A config file with the MQTT settings (a short reconnect delay keeps the tests quick).
    func mqttConfig(_ lines: [String] = []) throws -> String {
        let path = logind.directory + "/mqtt-\(Int.random(in: 0..<1_000_000)).conf"
        let text = (["mqtt = \(broker.url)", "mqtt-topic = \(Self.root)", "mqtt-reconnect-max = 1"] + lines)
            .joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A subscriber, waited for until the broker has its subscription.
    func subscriber(_ topics: [String] = [root + "/#"], session: String? = nil) throws -> TestProcess {
        let id = session ?? "sub-\(Int.random(in: 0..<1_000_000))"
        let sub = try broker.subscribe(topics, session: id, extra: session == nil ? ["-i", id] : [])
        XCTAssertNotNil(broker.waitForLog("Sending SUBACK to \(id)"), "the subscriber never subscribed:\n\(sub.log())")
        return sub
    }

    /// Every JSON line telwatch writes until (and with) the first `event`.
    func lines(_ watch: TestProcess, until event: String, into lines: inout [String]) {
        let found = watch.readLine(timeout: 15, where: { line in
            lines.append(line)
            return JSONLine.object(line)?["event"] as? String == event
        })
        XCTAssertNotNil(found, "no \(event) from telwatch:\n\(watch.log())")
    }

    /// The `events` messages until `count` distinct sequence numbers above `after` arrived
    /// (bounded), keyed by seq. Numbers up to `after` may come again (QoS 1 is at least once: an
    /// event whose PUBACK was lost with the broker is sent again) and are not counted.
    func events(_ sub: TestProcess, count: Int, after: Int = 0, timeout: Double = 30)
        -> (bySeq: [Int: String], order: [Int]) {
        var bySeq: [Int: String] = [:]
        var order: [Int] = []
        let deadline = monotonicNow() + timeout
        while bySeq.keys.filter({ $0 > after }).count < count,
              let message = sub.nextMessage(on: Self.events, timeout: max(0, deadline - monotonicNow())) {
            guard let seq = message.object?["seq"] as? Int else {
                XCTFail("an event without seq: \(message.payload)")
                continue
            }
            order.append(seq)
            if bySeq[seq] == nil { bySeq[seq] = message.payload }
        }
        return (bySeq, order)
    }

    /// The event stream's line with `seq` added: what MQTT carries.
    func withSeq(_ line: String, _ seq: Int) -> String {
        String(line.dropLast()) + ",\"seq\":\(seq)}"
    }

    func missedCall(_ watch: TestProcess, _ number: String, lines: inout [String]) throws {
        let call = try ring(number)
        self.lines(watch, until: "incoming", into: &lines)
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        self.lines(watch, until: "run-stopped", into: &lines)
    }

    /// `telwatch --json --mqtt …`, with every line up to `ready` collected.
    func startMQTTWatch(lines: inout [String], _ extra: [String] = [], config: [String] = []) throws -> TestProcess {
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager", "--state-dir",
                                  stateDirectory, "--inhibit", "none", "--config", try mqttConfig(config)] + extra)
        self.lines(watch, until: "ready", into: &lines)
        return watch
    }

    /// Every message until `count` events arrived, in the order of arrival.
    func messages(_ sub: TestProcess, events count: Int, timeout: Double = 30) -> [MQTTMessage] {
        var messages: [MQTTMessage] = []
        var seen = Set<Int>()
        let deadline = monotonicNow() + timeout
        while seen.count < count, let line = sub.readLine(timeout: max(0, deadline - monotonicNow())) {
            guard let message = MQTTMessage(line) else { continue }
            messages.append(message)
            if message.topic == Self.events, let seq = message.object?["seq"] as? Int { seen.insert(seq) }
        }
        return messages
    }

    /// Whether telwatch's stderr comes to hold what `condition` looks for (bounded; woken by its writes).
    func saysOnStderr(_ watch: TestProcess, timeout: Double = 10, _ condition: (String) -> Bool) -> Bool {
        guard let path = watch.logPath else { return condition(watch.log()) }
        return Files.waitUntil(path, timeout: timeout) { condition(watch.log()) }
    }

    /// The calls' states in a `calls` payload.
    func callStates(_ payload: String) -> [String] {
        guard let array = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [[String: Any]] else { return ["?"] }
        return array.compactMap { $0["state"] as? String }
    }

    // MARK: The event stream, exactly

    func testAFullScenarioArrivesAsTheExactEventLinesInOrderWithRetainedState() throws {
        try startModemManager()
        let sub = try subscriber()
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines)

        // Answered, then hung up by the far end.
        let answered = try ring("+15550001")
        self.lines(watch, until: "incoming", into: &lines)
        try mm(answered, Self.callInterface, "Accept")
        self.lines(watch, until: "connected", into: &lines)
        try control("RemoteHangup", [.objectPath(try ObjectPath(answered))])
        self.lines(watch, until: "run-stopped", into: &lines)
        // Missed.
        try missedCall(watch, "+15550002", lines: &lines)
        // Outgoing.
        let outgoing = try control("Dial", [.objectPath(try ObjectPath(Self.modem0)), .string("+15550004")])
            .first?.objectPath?.rawValue ?? ""
        self.lines(watch, until: "dialing", into: &lines)
        try setState(outgoing, .ringingOut, reason: .outgoingStarted)
        try setState(outgoing, .active, reason: .accepted)
        self.lines(watch, until: "connected", into: &lines)
        try mm(outgoing, Self.callInterface, "Hangup")
        self.lines(watch, until: "run-stopped", into: &lines)
        // Waiting and held: a second call waits, the first is held and the second answered.
        let first = try ring("+15550005")
        self.lines(watch, until: "incoming", into: &lines)
        try mm(first, Self.callInterface, "Accept")
        self.lines(watch, until: "connected", into: &lines)
        let second = try control("Wait", [.objectPath(try ObjectPath(Self.modem0)), .string("+15550006")])
            .first?.objectPath?.rawValue ?? ""
        self.lines(watch, until: "incoming", into: &lines)
        try mm(Self.modem0, "org.freedesktop.ModemManager1.Modem.Voice", "HoldAndAccept")
        self.lines(watch, until: "connected", into: &lines)
        self.lines(watch, until: "connected", into: &lines)
        try control("RemoteHangup", [.objectPath(try ObjectPath(second))])
        self.lines(watch, until: "disconnected", into: &lines)
        try setState(first, .active, reason: .unknown)
        try mm(first, Self.callInterface, "Hangup")
        self.lines(watch, until: "run-stopped", into: &lines)

        let messages = self.messages(sub, events: lines.count)
        let events = messages.filter { $0.topic == Self.events }.map(\.payload)
        XCTAssertEqual(events, lines.enumerated().map { withSeq($1, $0 + 1) },
                       "every event line, exactly, in order, numbered from 1")
        XCTAssertEqual(messages.first { $0.topic == Self.root + "/status" }?.payload, "online")
        // The retained calls followed every step: ringing, answered, held, and none at the end.
        let calls = messages.filter { $0.topic == Self.root + "/calls" }.map { callStates($0.payload) }
        XCTAssertTrue(calls.contains(["incoming"]), "\(calls)")
        XCTAssertTrue(calls.contains(["connected"]), "\(calls)")
        XCTAssertTrue(calls.contains(["dialing"]), "\(calls)")
        XCTAssertTrue(calls.contains(["connected", "incoming"]), "a waiting call beside the live one: \(calls)")
        let states = messages.filter { $0.topic == Self.root + "/state" }.compactMap { $0.object?["state"] as? String }
        XCTAssertTrue(states.contains("ringing") && states.contains("dialing") && states.contains("connected"), "\(states)")

        // A subscriber that comes later gets the retained state now.
        let late = try broker.subscribe([Self.root + "/status", Self.root + "/calls", Self.root + "/state",
                                         Self.root + "/run"])
        var now: [String: String] = [:]
        while now.count < 4, let line = late.readLine(timeout: 10), let message = MQTTMessage(line) {
            now[message.topic] = message.payload
        }
        XCTAssertEqual(now[Self.root + "/status"], "online")
        XCTAssertEqual(now[Self.root + "/calls"], "[]")
        let state = try XCTUnwrap(now[Self.root + "/state"].flatMap(JSONLine.object))
        XCTAssertEqual(state["state"] as? String, "idle")
        XCTAssertEqual(state["last_caller"] as? String, "+15550006")
        XCTAssertEqual(now[Self.root + "/run"].flatMap(JSONLine.object)?["running"] as? Bool, false)

        // A clean stop says offline itself.
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0), watch.log())
        XCTAssertEqual(sub.nextMessage(on: Self.root + "/status")?.payload, "offline")
        XCTAssertFalse(watch.log().contains("mqtt:"), "no MQTT trouble to report:\n\(watch.log())")
    }

    /// Tones the far end presses (docs/modem-stacks.md §14) are published as the event stream's
    /// line, filtered and counted as there; a burst is a few messages, never one per signal.
    func testTonesArePublishedAsTheirEventLines() throws {
        try startModemManager()
        let sub = try subscriber([Self.events])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines)
        let call = try ring("+15550009")
        self.lines(watch, until: "incoming", into: &lines)
        try mm(call, Self.callInterface, "Accept")
        self.lines(watch, until: "connected", into: &lines)
        try control("HearTones", [.objectPath(try ObjectPath(call)), .string("1;reboot"), .uint32(1)])
        self.lines(watch, until: "tones", into: &lines)
        try control("HearTones", [.objectPath(try ObjectPath(call)), .string("*"), .uint32(500)])
        var told = 0
        while told < 500, let line = watch.readLine(timeout: 15, where: { JSONLine.object($0)?["event"] as? String == "tones" }) {
            lines.append(line)
            let object = JSONLine.object(line)
            told += ((object?["tones"] as? String)?.count ?? 0) + (object?["dropped"] as? Int ?? 0)
        }
        XCTAssertEqual(told, 500)
        let toneLines = lines.filter { JSONLine.object($0)?["event"] as? String == "tones" }
        XCTAssertLessThan(toneLines.count, 10, "a burst is a few events")
        let first = JSONLine.object(try XCTUnwrap(toneLines.first, "no tones line"))
        XCTAssertEqual(first?["tones"] as? String, "1")
        XCTAssertEqual(first?["dropped"] as? Int, 7)

        let published = self.events(sub, count: lines.count)
        let tones = published.order.compactMap { published.bySeq[$0] }.filter { $0.contains(#""event":"tones""#) }
        XCTAssertEqual(tones, toneLines.map { line in withSeq(line, lines.firstIndex(of: line)! + 1) })
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0), watch.log())
    }

    // MARK: Availability

    func testSIGKILLMakesTheBrokerPublishOffline() throws {
        try startModemManager()
        let sub = try subscriber([Self.root + "/status"])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines)
        XCTAssertEqual(sub.nextMessage(on: Self.root + "/status")?.payload, "online")
        kill(watch.pid, SIGKILL)
        XCTAssertEqual(sub.nextMessage(on: Self.root + "/status")?.payload, "offline", "the last will")
    }

    /// telwatch killed while a call rings, the call missed while it is down, telwatch started
    /// again: what Home Assistant reads once `online` comes is the truth, whole. No `ringing`
    /// after the restart, the retained state before `online` with every field (the missed
    /// calls, the last caller remembered), and the call that ended unseen a missed call in the
    /// history, the retained count and `telwatch log` alike.
    func testARestartAfterACallEndedUnseenPublishesTheWholeTruthBeforeOnline() throws {
        try startModemManager()
        let sub = try subscriber([Self.root + "/state", Self.root + "/status"])
        var lines: [String] = []
        let first = try startMQTTWatch(lines: &lines)
        try missedCall(first, "+15550081", lines: &lines)
        XCTAssertNotNil(sub.nextMessage(on: Self.root + "/state", where: { $0.object?["missed_unseen"] as? Int == 1 }))
        let call = try ring("+15550082")
        self.lines(first, until: "incoming", into: &lines)
        XCTAssertNotNil(sub.nextMessage(on: Self.root + "/state", where: {
            $0.object?["state"] as? String == "ringing" && $0.object?["last_caller"] as? String == "+15550082"
        }))
        // Killed once the ring is in the history too (its write follows the turn's messages).
        let deadline = monotonicNow() + 15
        while monotonicNow() < deadline,
              try !fixture.run([Self.telwatch, "log", "--json", "--state-dir", stateDirectory]).output.contains("+15550082") {
            usleep(20_000)
        }
        kill(first.pid, SIGKILL)
        XCTAssertNotNil(first.wait(timeout: 15))
        XCTAssertEqual(sub.nextMessage(on: Self.root + "/status")?.payload, "offline", "the last will")
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])

        let second = try startMQTTWatch(lines: &lines)
        var after: [MQTTMessage] = []
        let online = sub.readLine(timeout: 15, where: { line in
            guard let message = MQTTMessage(line) else { return false }
            after.append(message)
            return message.topic == Self.root + "/status"
        })
        XCTAssertEqual(online.flatMap(MQTTMessage.init)?.payload, "online", "\(after.map(\.payload))")
        let states = after.filter { $0.topic == Self.root + "/state" }.compactMap(\.object)
        let current = try XCTUnwrap(states.last, "the state comes before online: \(after.map(\.payload))")
        XCTAssertEqual(current["state"] as? String, "idle")
        XCTAssertEqual(current["ringing"] as? Bool, false)
        XCTAssertEqual(current["last_caller"] as? String, "+15550082", "remembered across the restart")
        XCTAssertEqual(current["last_missed_caller"] as? String, "+15550082")
        XCTAssertEqual(current["missed_unseen"] as? Int, 2, "the call that ended unseen was missed")
        XCTAssertFalse(states.contains { $0["state"] as? String != "idle" || $0["missed_unseen"] == nil }, "\(states)")
        // Nothing but the truth after online either.
        XCTAssertNil(sub.nextMessage(on: Self.root + "/state", timeout: 1, where: {
            $0.object?["state"] as? String != "idle" || $0.object?["missed_unseen"] as? Int != 2
        }))
        let log = try fixture.run([Self.telwatch, "log", "--json", "--missed", "--state-dir", stateDirectory])
        XCTAssertEqual(log.status, .exited(0), log.log)
        XCTAssertEqual(log.output.split(separator: "\n").filter { $0.contains("+15550082") }.count, 1, log.output)
        XCTAssertFalse(second.log().contains("mqtt:"), second.log())
    }

    // MARK: Nothing lost while the broker is away

    func testEventsDuringABrokerOutageArriveInOrderAfterItsReturn() throws {
        try startModemManager()
        let sub = try subscriber([Self.events], session: "sub-outage")
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines)
        let before = events(sub, count: lines.count)
        XCTAssertEqual(before.bySeq.count, lines.count)

        broker.stop()
        for number in ["+15550011", "+15550012", "+15550013"] { try missedCall(watch, number, lines: &lines) }
        XCTAssertTrue(watch.isRunning, "the monitor goes on without the broker")
        try broker.start()

        let after = events(sub, count: lines.count - before.bySeq.count, after: before.bySeq.count)
        let all = before.bySeq.merging(after.bySeq) { first, _ in first }
        XCTAssertEqual(all.keys.sorted(), Array(1...lines.count), "contiguous numbers, none missing")
        for (index, line) in lines.enumerated() { XCTAssertEqual(all[index + 1], withSeq(line, index + 1)) }
        let resent = after.order.filter { $0 > before.bySeq.count }
        XCTAssertEqual(resent, resent.sorted(), "in order after the reconnect")
        XCTAssertEqual(Set(resent).count, resent.count, "none twice")
        let mqttLines = watch.log().split(separator: "\n").filter { $0.contains("mqtt:") }
        XCTAssertTrue(mqttLines.first?.contains("lost the broker") == true, watch.log())
        XCTAssertLessThanOrEqual(mqttLines.count, 3, "one line per kind of trouble, not one per attempt:\n\(watch.log())")
    }

    func testAConnectionDroppedWhileEventsFlowLosesNothing() throws {
        try startModemManager()
        let sub = try subscriber([Self.events], session: "sub-takeover")
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines)
        let delivered = events(sub, count: lines.count).bySeq.count
        for index in 0..<3 {
            let call = try ring("+1555008\(index)")
            // A client with telwatch's id: the broker drops telwatch's connection for it, as the
            // events of the ring are being published.
            let takeover = try fixture.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", String(broker.port), "-q", "1",
                                            "-i", "telwatch:" + Self.root, "-t", "takeover", "-m", "x"])
            XCTAssertEqual(takeover.status, .exited(0), takeover.log)
            self.lines(watch, until: "incoming", into: &lines)
            try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
            self.lines(watch, until: "run-stopped", into: &lines)
        }
        let after = events(sub, count: lines.count - delivered, after: delivered)
        XCTAssertEqual(after.bySeq.keys.filter { $0 > delivered }.sorted(), Array(delivered + 1...lines.count),
                       "every event arrived")
        for seq in delivered + 1...lines.count { XCTAssertEqual(after.bySeq[seq], withSeq(lines[seq - 1], seq)) }
        XCTAssertTrue(watch.log().contains("lost the broker"), watch.log())
    }

    func testTheOutboxOfAStoppedTelwatchIsDeliveredByTheNextOne() throws {
        try startModemManager()
        let sub = try subscriber([Self.events], session: "sub-restart")
        var lines: [String] = []
        let first = try startMQTTWatch(lines: &lines)
        XCTAssertEqual(events(sub, count: lines.count).bySeq.count, lines.count)
        let delivered = lines.count

        broker.stop()
        try missedCall(first, "+15550021", lines: &lines)
        first.signal(SIGTERM)
        XCTAssertEqual(first.wait(timeout: 15), .exited(0), first.log())
        let waiting = lines.count

        let second = try startMQTTWatch(lines: &lines)
        try broker.start()
        let after = events(sub, count: lines.count - delivered, after: delivered)
        for seq in delivered + 1...waiting {
            XCTAssertEqual(after.bySeq[seq], withSeq(lines[seq - 1], seq), "the first telwatch's event \(seq)")
        }
        XCTAssertEqual(after.bySeq.keys.filter { $0 > delivered }.sorted(), Array(delivered + 1...lines.count),
                       "numbers go on across the restart")
        second.signal(SIGTERM)
        XCTAssertEqual(second.wait(timeout: 15), .exited(0))
    }

    func testAFullOutboxDropsTheOldestAndSaysSoOnce() throws {
        try startModemManager()
        let sub = try subscriber([Self.events], session: "sub-bound")
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines, config: ["mqtt-outbox-limit = 4"])
        XCTAssertEqual(events(sub, count: lines.count).bySeq.count, lines.count)
        let delivered = lines.count

        broker.stop()
        try missedCall(watch, "+15550031", lines: &lines)
        try missedCall(watch, "+15550032", lines: &lines)
        let held = lines.count - delivered
        XCTAssertGreaterThan(held, 4)
        try broker.start()

        // The newest four and the one event that says what went before them.
        let after = events(sub, count: 5, after: lines.count - 4)
        let dropped = after.bySeq.values.compactMap(JSONLine.object).filter { $0["event"] as? String == "mqtt-dropped" }
        XCTAssertEqual(dropped.count, 1, "\(after.bySeq)")
        let first = try XCTUnwrap(dropped.first?["first_seq"] as? Int)
        XCTAssertEqual(dropped.first?["last_seq"] as? Int, lines.count - 4)
        XCTAssertEqual(dropped.first?["dropped"] as? Int, lines.count - 4 - first + 1)
        // At least the events of the outage beyond the newest four; maybe also some published
        // before it whose PUBACK the broker did not send before it stopped.
        XCTAssertLessThanOrEqual(first, delivered + 1)
        XCTAssertEqual(dropped.first?["seq"] as? Int, lines.count + 1)
        // The newest four are kept, with their own numbers.
        for seq in lines.count - 3...lines.count { XCTAssertEqual(after.bySeq[seq], withSeq(lines[seq - 1], seq)) }
        XCTAssertEqual(watch.log().components(separatedBy: "past its bounds").count - 1, 1, watch.log())
    }

    // MARK: Bad states

    /// Once the broker saw two attempts fail (`brokerSays` twice), a ring is still followed and
    /// telwatch has said exactly one MQTT line, with `words` in it.
    func assertOneLineAndTheMonitorGoesOn(_ watch: TestProcess, brokerSays: String, words: String,
                                          file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertNotNil(broker.waitForLog(brokerSays), file: file, line: line)
        XCTAssertNotNil(broker.waitForLog(brokerSays), "telwatch tries again", file: file, line: line)
        _ = try ring("+15550041")
        XCTAssertNotNil(nextEvent(watch, "incoming"), "calls are followed without the broker", file: file, line: line)
        let mqttLines = watch.log().split(separator: "\n").filter { $0.contains("mqtt:") }
        XCTAssertEqual(mqttLines.count, 1, watch.log(), file: file, line: line)
        XCTAssertTrue(mqttLines.first?.contains(words) == true, watch.log(), file: file, line: line)
    }

    func testWithoutLibmosquittoMQTTIsOneLineAndTheMonitorGoesOn() throws {
        // libmosquitto is loaded only when MQTT is on. A libmosquitto.so.1 that cannot be loaded
        // (an empty file) is found first, as if libmosquitto1 were not installed.
        let libraries = logind.directory + "/libraries"
        mkdir(libraries, 0o700)
        try "".write(toFile: libraries + "/libmosquitto.so.1", atomically: true, encoding: .utf8)
        try startModemManager()
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager", "--state-dir",
                                  stateDirectory, "--inhibit", "none", "--config", try mqttConfig()],
                                 extraEnvironment: ["LD_LIBRARY_PATH=" + libraries])
        var lines: [String] = []
        self.lines(watch, until: "ready", into: &lines)
        _ = try ring("+15550042")
        XCTAssertNotNil(nextEvent(watch, "incoming"), "calls are followed without MQTT:\n\(watch.log())")
        let mqttLines = watch.log().split(separator: "\n").filter { $0.contains("mqtt:") }
        XCTAssertEqual(mqttLines.count, 1, watch.log())
        XCTAssertTrue(mqttLines.first?.contains("MQTT needs libmosquitto.so.1 (Debian: libmosquitto1)") == true,
                      watch.log())
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0), watch.log())
    }

    func testARefusedLoginIsOneLineAndTheMonitorGoesOn() throws {
        broker.stop()
        let passwords = logind.directory + "/mqtt/passwords"
        let made = try fixture.run(["mosquitto_passwd", "-b", "-c", passwords, "phone", "right"])
        XCTAssertEqual(made.status, .exited(0), made.log)
        broker = try MosquittoBroker(fixture: fixture, directory: logind.directory + "/mqtt",
                                     extraConfig: ["allow_anonymous false", "password_file \(passwords)"])
        let credentials = logind.directory + "/mqtt-credentials"
        try "phone\nwrong\n".write(toFile: credentials, atomically: true, encoding: .utf8)
        try startModemManager()
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines, ["--mqtt-credentials", credentials])
        try assertOneLineAndTheMonitorGoesOn(watch, brokerSays: "not authorised", words: "not authorised")
        XCTAssertFalse(watch.log().contains("wrong"), "the password is never said")

        // The right password, from the config file this time: the broker lets it in.
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0))
        var more: [String] = []
        let right = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager", "--state-dir",
                                  stateDirectory + "2", "--inhibit", "none",
                                  "--config", try mqttConfig(["mqtt-user = phone", "mqtt-password = right"])])
        self.lines(right, until: "ready", into: &more)
        XCTAssertNotNil(broker.waitForLog("as telwatch:\(Self.root)"), right.log())
        XCTAssertFalse(right.log().contains("mqtt:"), right.log())
    }

    func testAnEventTooLargeForTheBrokerIsOneLineAndTheNextOnesFlow() throws {
        try startModemManager()
        let sub = try subscriber([Self.events])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines, config: ["mqtt-max-message = 1024"])
        // A hostile caller id within the backend's 256 bytes, whose escapes make its lines large.
        let huge = "+1" + String(repeating: "\u{01}", count: 240)
        try missedCall(watch, huge, lines: &lines)
        try missedCall(watch, "+15550061", lines: &lines)
        let arrived = events(sub, count: lines.count - 3).bySeq
        XCTAssertNil(arrived.values.first { $0.contains("\\u0001\\u0001") }, "the large events were not published")
        XCTAssertNotNil(arrived.values.first { $0.contains("+15550061") }, "the next calls' events were")
        let tooLarge = watch.log().split(separator: "\n").filter { $0.contains("too large") }
        XCTAssertEqual(tooLarge.count, 1, watch.log())
    }

    /// A CA and a broker certificate for 127.0.0.1, made with openssl for this test.
    func makeCertificates(_ directory: String, name: String) throws -> (ca: String, certificate: String, key: String) {
        let ca = directory + "/\(name)-ca.pem", caKey = directory + "/\(name)-ca.key"
        let key = directory + "/\(name)-broker.key", request = directory + "/\(name)-broker.csr"
        let certificate = directory + "/\(name)-broker.pem", extensions = directory + "/\(name)-ext.cnf"
        try "subjectAltName = IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for command in [["openssl", "req", "-x509"] + ec + ["-keyout", caKey, "-out", ca, "-days", "1", "-subj", "/CN=telwatch test CA \(name)"],
                        ["openssl", "req"] + ec + ["-keyout", key, "-out", request, "-subj", "/CN=127.0.0.1"],
                        ["openssl", "x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial",
                         "-out", certificate, "-days", "1", "-extfile", extensions]] {
            let made = try fixture.run(command)
            XCTAssertEqual(made.status, .exited(0), made.log)
        }
        return (ca, certificate, key)
    }

    func testTLSWithTheRightCAConnectsAndAWrongCAIsOneLine() throws {
        broker.stop()
        let directory = logind.directory + "/mqtt"
        let good = try makeCertificates(directory, name: "good")
        let other = try makeCertificates(directory, name: "other")
        broker = try MosquittoBroker(fixture: fixture, directory: directory,
                                     extraConfig: ["cafile \(good.ca)", "certfile \(good.certificate)", "keyfile \(good.key)"])
        let url = "mqtts://127.0.0.1:\(broker.port)"
        try startModemManager()
        var lines: [String] = []
        let trusted = try startMQTTWatch(lines: &lines, ["--mqtt", url, "--mqtt-ca", good.ca])
        XCTAssertNotNil(broker.waitForLog("as telwatch:"), "the TLS connection was accepted:\n\(trusted.log())")

        let wrong = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager", "--state-dir",
                                  stateDirectory + "2", "--inhibit", "none", "--no-api", "--config", try mqttConfig(),
                                  "--mqtt", url, "--mqtt-ca", other.ca])
        try assertOneLineAndTheMonitorGoesOn(wrong, brokerSays: "OpenSSL Error", words: "certificate")
        XCTAssertFalse(trusted.log().contains("mqtt:"), trusted.log())
    }

    func testWithoutMQTTNothingOfItExists() throws {
        try startModemManager()
        let watch = try startWatch(["--inhibit", "none"])
        _ = try ring("+15550091")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertNotEqual(access(stateDirectory + "/mqtt-outbox.db", F_OK), 0, "no outbox")
        XCTAssertNil(broker.waitForLog("New client connected", timeout: 0.5), "no connection")
        XCTAssertFalse(watch.log().contains("mqtt"), watch.log())
    }

    func testThePasswordIsNeverTakenFromTheCommandLine() throws {
        let result = try runToEnd(["--mqtt", broker.url, "--mqtt-password", "secret"])
        XCTAssertEqual(result.status, .exited(2))
        XCTAssertTrue(result.errors.contains("config file"), result.errors)
    }

    // MARK: Home Assistant

    /// The keys Home Assistant's MQTT discovery documents for these components (the configuration
    /// variables of its MQTT binary sensor and sensor integrations; docs/mqtt.md).
    static let commonKeys: Set<String> = [
        "availability", "availability_mode", "availability_template", "availability_topic", "device",
        "device_class", "enabled_by_default", "encoding", "entity_category", "entity_picture", "expire_after",
        "force_update", "icon", "origin", "json_attributes_template", "json_attributes_topic", "name", "object_id",
        "default_entity_id", "payload_available", "payload_not_available", "platform", "qos", "state_topic",
        "unique_id", "value_template",
    ]
    static let binarySensorKeys = commonKeys.union(["off_delay", "payload_off", "payload_on"])
    static let sensorKeys = commonKeys.union(["last_reset_value_template", "options", "state_class",
                                              "suggested_display_precision", "unit_of_measurement"])
    static let eventKeys = commonKeys.union(["event_types"])
    /// `button.mqtt`: no state, a command instead.
    static let buttonKeys = commonKeys.subtracting(["expire_after", "force_update", "state_topic", "value_template"])
        .union(["command_template", "command_topic", "payload_press", "retain"])
    static let originKeys: Set<String> = ["name", "sw_version", "support_url"]
    /// Every config telwatch publishes, by component and object: with a history and commands, without screening.
    static let entities: [String: String] = [
        "ringing": "binary_sensor", "call_live": "binary_sensor", "call_state": "sensor", "last_caller": "sensor",
        "missed_unseen": "sensor", "live_calls": "sensor", "last_missed_caller": "sensor", "last_call_time": "sensor",
        "last_call_direction": "sensor", "last_call_duration": "sensor", "call": "event",
        "reject": "button", "silence": "button",
    ]
    static let deviceKeys: Set<String> = ["configuration_url", "connections", "hw_version", "identifiers", "manufacturer",
                                          "model", "model_id", "name", "serial_number", "suggested_area", "sw_version",
                                          "via_device"]

    /// Every discovery config telwatch publishes (an empty one removes its entity), by topic.
    func discoveryConfigs(_ sub: TestProcess, count: Int = 14) -> [String: MQTTMessage] {
        var configs: [String: MQTTMessage] = [:]
        while configs.count < count, let line = sub.readLine(timeout: 15), let message = MQTTMessage(line) {
            configs[message.topic] = message
        }
        return configs
    }

    func testDiscoveryConfigsUseOnlyHomeAssistantsDocumentedKeys() throws {
        try startModemManager()
        let sub = try subscriber(["homeassistant/#"])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines, ["--mqtt-commands"])
        let published = discoveryConfigs(sub)
        XCTAssertEqual(published.count, 14, "\(published.keys)")
        XCTAssertEqual(published.filter { $0.value.payload.isEmpty }.map(\.key),
                       ["homeassistant/sensor/telwatch_\(MQTTCommandTests.nodeSuffix)/blocked_today/config"],
                       "only the count of blocked calls is removed, without screening")
        let configs = published.compactMapValues(\.object)
        XCTAssertEqual(Set(configs.keys.map { "\($0.split(separator: "/")[1]):\($0.split(separator: "/")[3])" }),
                       Set(Self.entities.map { "\($1):\($0)" }))
        XCTAssertNotNil(configs.keys.first { $0.hasSuffix("/missed_unseen/config") }, "the history counts missed calls")
        var uniqueIDs = Set<String>()
        for (topic, config) in configs {
            let parts = topic.split(separator: "/")
            XCTAssertEqual(parts.count, 5, topic)
            XCTAssertEqual(parts.last, "config")
            XCTAssertTrue(parts[2...3].allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } })
            let allowed = ["sensor": Self.sensorKeys, "event": Self.eventKeys, "button": Self.buttonKeys][String(parts[1])]
                ?? Self.binarySensorKeys
            XCTAssertTrue(Set(config.keys).isSubset(of: allowed), "\(topic): \(Set(config.keys).subtracting(allowed))")
            if parts[1] == "button" {
                for key in ["name", "unique_id", "command_topic", "payload_press", "device"] {
                    XCTAssertNotNil(config[key], "\(topic) \(key)")
                }
                XCTAssertEqual(config["command_topic"] as? String, Self.root + "/command")
                let availability = (config["availability"] as? [[String: Any]] ?? []).compactMap { $0["topic"] as? String }
                XCTAssertEqual(availability, [Self.root + "/status", Self.root + "/ringing-call"], topic)
            } else {
                for key in ["name", "unique_id", "state_topic", "device"] { XCTAssertNotNil(config[key], "\(topic) \(key)") }
                XCTAssertEqual(config["state_topic"] as? String, Self.root + (parts[1] == "event" ? "/call-event" : "/state"))
                XCTAssertEqual(config["availability_topic"] as? String, Self.root + "/status")
            }
            if parts[1] == "binary_sensor" { XCTAssertNotNil(config["device_class"], "\(topic): a binary sensor's class") }
            let device = try XCTUnwrap(config["device"] as? [String: Any])
            XCTAssertTrue(Set(device.keys).isSubset(of: Self.deviceKeys), "\(device.keys)")
            XCTAssertNotNil(device["sw_version"], "telwatch's version on the device")
            let origin = try XCTUnwrap(config["origin"] as? [String: Any], "\(topic): the discovery's origin")
            XCTAssertTrue(Set(origin.keys).isSubset(of: Self.originKeys), "\(origin.keys)")
            XCTAssertEqual(origin["name"] as? String, "telwatch")
            XCTAssertFalse((device["identifiers"] as? [String] ?? []).isEmpty, "one device per host")
            uniqueIDs.insert(config["unique_id"] as? String ?? "")
        }
        XCTAssertEqual(uniqueIDs.count, 13)
        XCTAssertEqual(configs.first { $0.key.hasSuffix("/live_calls/config") }?.value["entity_category"] as? String,
                       "diagnostic")
        XCTAssertEqual(configs.first { $0.key.hasSuffix("/call/config") }?.value["event_types"] as? [String],
                       ["rang", "answered", "missed", "rejected", "ended"])

        // Discovery turned off: every entity is removed, not left working.
        watch.terminate()
        let off = try startMQTTWatch(lines: &lines, config: ["mqtt-homeassistant = false"])
        let removed = discoveryConfigs(sub)
        XCTAssertEqual(removed.count, 14, "\(removed.keys)")
        XCTAssertTrue(removed.values.allSatisfy(\.payload.isEmpty), "\(removed.filter { !$0.value.payload.isEmpty }.keys)")
        off.terminate()
        let retained = try subscriber(["homeassistant/#"])
        XCTAssertNil(retained.readLine(timeout: 1), "no config is left on the broker")
    }

    /// The retained state counts the missed calls not seen yet, as the call history does: at
    /// start, after each missed call, and after a run once `telwatch log --mark-seen` has marked them.
    func testTheRetainedStateCountsMissedCallsUnseenFromTheHistory() throws {
        try startModemManager()
        let sub = try subscriber([Self.root + "/state"])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines)
        // The state is published again at every change of a call; the count follows its own.
        var counts: [Int] = []
        func reaches(_ count: Int) -> Bool {
            sub.readLine(timeout: 15, where: { line in
                guard let now = MQTTMessage(line)?.object?["missed_unseen"] as? Int else { return false }
                if counts.last != now { counts.append(now) }
                return now == count
            }) != nil
        }
        XCTAssertTrue(reaches(0), "none at start: \(counts)")
        try missedCall(watch, "+15550071", lines: &lines)
        XCTAssertTrue(reaches(1), "\(counts)")
        try missedCall(watch, "+15550072", lines: &lines)
        XCTAssertTrue(reaches(2), "\(counts)")

        let seen = try fixture.run([Self.telwatch, "log", "--mark-seen", "--state-dir", stateDirectory])
        XCTAssertEqual(seen.status, .exited(0), seen.log)
        // An answered call's run ends: the count is asked again.
        let answered = try ring("+15550073")
        self.lines(watch, until: "incoming", into: &lines)
        try mm(answered, Self.callInterface, "Accept")
        self.lines(watch, until: "connected", into: &lines)
        try control("RemoteHangup", [.objectPath(try ObjectPath(answered))])
        self.lines(watch, until: "run-stopped", into: &lines)
        XCTAssertTrue(reaches(0), "marked seen by telwatch log: \(counts)")
        XCTAssertEqual(counts, [0, 1, 2, 0], "each count once, in order")
        XCTAssertFalse(watch.log().contains("mqtt:"), watch.log())
    }

    /// Call screening on: the retained state counts the calls it blocked today (Home Assistant's
    /// "Calls blocked today"), and a blocked call never rings there (a TV paused for a blocked
    /// call is what screening prevents); a silenced call is no blocked call. With `--mqtt-commands`,
    /// `silence CALL_ID` on TOPIC/command stops a ringing call's ring; what is not a command (a
    /// retained message among them) is refused with one line a kind. Without it telwatch does not subscribe.
    func testScreeningCountsBlockedCallsAndCommandsAreTakenOnlyWithTheOption() throws {
        try startModemManager()
        let rules = logind.directory + "/screening.conf"
        try "block +1900*\n".write(toFile: rules, atomically: true, encoding: .utf8)
        let command = Self.root + "/command"
        // A retained command, left on the broker before telwatch starts: old news, not a command.
        try broker.publish(command, "silence 00000000-0000-4000-8000-000000000000", retain: true)
        defer { try? broker.publish(command, "", retain: true) }
        let sub = try subscriber([Self.root + "/state"])
        let discovery = try subscriber(["homeassistant/sensor/+/blocked_today/config"])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines, ["--screening", rules, "--mqtt-commands"])
        var counts: [Int] = []
        var rang: [String] = []
        func reaches(_ count: Int) -> Bool {
            sub.readLine(timeout: 15, where: { line in
                if MQTTMessage(line)?.object?["ringing"] as? Bool == true { rang.append(line) }
                guard let now = MQTTMessage(line)?.object?["blocked_today"] as? Int else { return false }
                if counts.last != now { counts.append(now) }
                return now == count
            }) != nil
        }
        XCTAssertTrue(reaches(0), "none at start: \(counts)")
        let config = try XCTUnwrap(discovery.readLine(timeout: 15).flatMap(MQTTMessage.init)?.object)
        XCTAssertEqual(config["state_class"] as? String, "total_increasing")
        XCTAssertEqual(config["name"] as? String, "Calls blocked today")

        _ = try ring("+19005550100")
        self.lines(watch, until: "screened", into: &lines)
        XCTAssertTrue(reaches(1), "\(counts)")
        XCTAssertNotNil(sub.readLine(timeout: 15, where: { line in
            let state = MQTTMessage(line)?.object
            if state?["ringing"] as? Bool == true { rang.append(line) }
            return state?["live_calls"] as? Int == 0
        }), "the blocked call ends")
        XCTAssertEqual(rang, [], "a blocked call never rings")

        // A ringing call, silenced from MQTT: its screened event says who (rule user).
        let call = try ring("+15550001")
        self.lines(watch, until: "incoming", into: &lines)
        let id = try XCTUnwrap(JSONLine.object(lines.last ?? "")?["call_id"] as? String)
        try broker.publish(command, "silence \(id.uppercased())")
        self.lines(watch, until: "screened", into: &lines)
        let silenced = try XCTUnwrap(JSONLine.object(lines.last ?? ""))
        XCTAssertEqual(silenced["call_id"] as? String, id)
        XCTAssertEqual(silenced["action"] as? String, "silence")
        XCTAssertEqual(silenced["rule"] as? String, "user")

        // What is not a command: nothing happens, one line a kind.
        try broker.publish(command, "reboot \(id)")
        try broker.publish(command, "reboot now")
        try broker.publish(command, "reject everything")
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        self.lines(watch, until: "run-stopped", into: &lines)
        func refusals() -> [Substring] {
            watch.log().split(separator: "\n").filter { $0.contains("a command on \(command) was refused") }
        }
        XCTAssertTrue(saysOnStderr(watch) { _ in refusals().count == 3 }, watch.log())
        XCTAssertTrue(refusals().contains { $0.contains("a retained message is not a command") }, watch.log())
        XCTAssertTrue(refusals().contains {
            $0.contains("only `silence`, `hangup` (or `reject`), `answer` and `tones` are taken")
        }, watch.log())
        XCTAssertTrue(refusals().contains { $0.contains("reject takes `reject CALL_ID` or `reject ringing`") }, watch.log())
        XCTAssertEqual(lines.filter { JSONLine.object($0)?["event"] as? String == "screened" }.count, 2, "\(lines)")
        XCTAssertEqual(counts.last, 1, "a silenced call is not blocked: \(counts)")
        watch.terminate()

        // Without --mqtt-commands: no subscription at all.
        let subscriptions = { self.broker.process?.log().components(separatedBy: "SUBSCRIBE from telwatch").count ?? 0 }
        let before = subscriptions()
        let plain = try startMQTTWatch(lines: &lines, ["--screening", rules])
        XCTAssertNotNil(sub.nextMessage(on: Self.root + "/state"))
        plain.terminate()
        XCTAssertEqual(subscriptions(), before, "no command topic without --mqtt-commands")
    }

    /// With `--mqtt-commands`, TOPIC/ringing-call is `online` while exactly one call rings (Home
    /// Assistant's Reject and Silence buttons are available only then), and `silence ringing` and
    /// `reject ringing` (what those buttons send) act on that call; with none or two ringing they
    /// are refused, and `hangup CALL_ID` names one of two. Each act is an `acted` event by `mqtt`,
    /// on the event stream and on TOPIC/events.
    func testTheButtonsCommandsActOnTheOneRingingCall() throws {
        try startModemManager()
        let command = Self.root + "/command"
        let ringingCall = Self.root + "/ringing-call"
        let sub = try subscriber([ringingCall, Self.events])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines, ["--mqtt-commands"])
        func refused(_ why: String) -> Bool {
            saysOnStderr(watch) { $0.contains("a command on \(command) was refused: \(why)") }
        }
        func ringing(_ payload: String) -> Bool { sub.nextMessage(on: ringingCall, where: { $0.payload == payload }) != nil }
        func lastID() -> String { JSONLine.object(lines.last ?? "")?["call_id"] as? String ?? "?" }

        XCTAssertTrue(ringing("offline"))
        try broker.publish(command, "silence ringing")
        XCTAssertTrue(refused("silence ringing: no call rings"), watch.log())

        _ = try ring("+15550031")
        self.lines(watch, until: "incoming", into: &lines)
        let first = lastID()
        XCTAssertTrue(ringing("online"), "one call rings")
        try broker.publish(command, "silence ringing")
        self.lines(watch, until: "screened", into: &lines)
        XCTAssertEqual(JSONLine.object(lines.last ?? "")?["call_id"] as? String, first)
        XCTAssertEqual(JSONLine.object(lines.last ?? "")?["action"] as? String, "silence")

        _ = try ring("+15550032")
        self.lines(watch, until: "incoming", into: &lines)
        let second = lastID()
        XCTAssertTrue(ringing("offline"), "two ring: neither is the ringing call")
        try broker.publish(command, "reject ringing")
        XCTAssertTrue(refused("reject ringing: 2 calls ring; name one by its call_id"), watch.log())
        try broker.publish(command, "hangup \(second)")
        self.lines(watch, until: "disconnected", into: &lines)
        XCTAssertEqual(lastID(), second)
        XCTAssertTrue(ringing("online"), "the silenced call still rings at the far end")

        try broker.publish(command, "reject ringing")
        self.lines(watch, until: "disconnected", into: &lines)
        XCTAssertEqual(lastID(), first)
        XCTAssertTrue(ringing("offline"))
        let acted = { lines.compactMap(JSONLine.object).filter { $0["event"] as? String == "acted" } }
        if acted().count < 2 { self.lines(watch, until: "acted", into: &lines) }
        if acted().count < 2 { self.lines(watch, until: "acted", into: &lines) }
        XCTAssertEqual(acted().map { "\($0["act"] as? String ?? "?") \($0["call_id"] as? String ?? "?") "
                                     + "\($0["by"] as? String ?? "?") \($0["result"] as? String ?? "?")" },
                       ["hangup \(second) mqtt ok", "hangup \(first) mqtt ok"])
        let published = sub.nextMessage(on: Self.events, where: { $0.object?["event"] as? String == "acted" })
        XCTAssertEqual(published?.object?["by"] as? String, "mqtt")
    }

    /// Each call's outcome is one message on TOPIC/call-event (Home Assistant's "Call" event
    /// entity), as it happens and never again: answered (rang, answered, ended with its
    /// length), missed (rang, missed), rejected by screening (rejected alone: it never rang for
    /// the user), and nothing for a call found ringing by a telwatch started again.
    func testEachCallsOutcomeIsOneEventAndARestartFiresNone() throws {
        try startModemManager()
        let rules = logind.directory + "/screening.conf"
        try "block +1900*\n".write(toFile: rules, atomically: true, encoding: .utf8)
        let topic = Self.root + "/call-event"
        let sub = try subscriber([topic])
        var lines: [String] = []
        var watch = try startMQTTWatch(lines: &lines, ["--screening", rules])
        func outcomes(_ count: Int) -> [[String: Any]] {
            var got: [[String: Any]] = []
            while got.count < count, let message = sub.nextMessage(on: topic) { got.append(message.object ?? [:]) }
            return got
        }
        let answered = try ring("+15550061")
        self.lines(watch, until: "incoming", into: &lines)
        try mm(answered, Self.callInterface, "Accept")
        self.lines(watch, until: "connected", into: &lines)
        try control("RemoteHangup", [.objectPath(try ObjectPath(answered))])
        self.lines(watch, until: "run-stopped", into: &lines)
        let first = outcomes(3)
        XCTAssertEqual(first.compactMap { $0["event_type"] as? String }, ["rang", "answered", "ended"])
        XCTAssertEqual(first.first?["number"] as? String, "+15550061")
        XCTAssertNotNil(first.last?["duration"] as? Double, "\(first)")

        try missedCall(watch, "+15550062", lines: &lines)
        XCTAssertEqual(outcomes(2).compactMap { $0["event_type"] as? String }, ["rang", "missed"])

        _ = try ring("+19005550163")
        self.lines(watch, until: "screened", into: &lines)
        self.lines(watch, until: "run-stopped", into: &lines)
        let rejected = outcomes(1)
        XCTAssertEqual(rejected.compactMap { $0["event_type"] as? String }, ["rejected"])
        XCTAssertEqual(rejected.first?["number"] as? String, "+19005550163")

        // Restarted while a call rings: it rang before; its end is the one news.
        let ringing = try ring("+15550064")
        self.lines(watch, until: "incoming", into: &lines)
        XCTAssertEqual(outcomes(1).compactMap { $0["event_type"] as? String }, ["rang"])
        watch.terminate()
        watch = try startMQTTWatch(lines: &lines, ["--screening", rules])
        try control("RemoteHangup", [.objectPath(try ObjectPath(ringing))])
        self.lines(watch, until: "run-stopped", into: &lines)
        XCTAssertEqual(outcomes(1).compactMap { $0["event_type"] as? String }, ["missed"])
        XCTAssertNil(sub.nextMessage(on: topic, timeout: 1), "nothing more")
        XCTAssertFalse(watch.log().contains("mqtt:"), watch.log())
    }

    func testRedactedNumbersRemoveTheLastCallerEverywhere() throws {
        try startModemManager()
        let sub = try subscriber(["homeassistant/#", Self.root + "/state", Self.events])
        var lines: [String] = []
        let watch = try startMQTTWatch(lines: &lines, ["--redact-numbers"])
        _ = try ring("+15550051")
        self.lines(watch, until: "incoming", into: &lines)
        var all: [MQTTMessage] = []
        _ = sub.readLine(timeout: 15, where: { line in
            guard let message = MQTTMessage(line) else { return false }
            all.append(message)
            return message.topic == Self.events && message.object?["event"] as? String == "incoming"
        })
        let lastCaller = all.first { $0.topic.hasSuffix("/last_caller/config") }
        XCTAssertEqual(lastCaller?.payload, "", "an empty retained config removes the entity")
        XCTAssertFalse(all.contains { $0.payload.contains("15550051") }, "\(all.map(\.payload))")
        XCTAssertTrue(all.contains { $0.topic == Self.root + "/state" && $0.object?["state"] as? String == "ringing" })
    }

    func testRedactionTurnedOnBySIGHUPRemovesTheLastCallerAtOnce() throws {
        try startModemManager()
        let lastCaller = "homeassistant/+/+/last_caller/config"
        let sub = try subscriber([lastCaller])
        let config = logind.directory + "/reload.conf"
        let settings = "mqtt = \(broker.url)\nmqtt-topic = \(Self.root)\n"
        try settings.write(toFile: config, atomically: true, encoding: .utf8)
        var lines: [String] = []
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager", "--state-dir",
                                  stateDirectory, "--inhibit", "none", "--config", config])
        self.lines(watch, until: "ready", into: &lines)
        let first = sub.readLine(timeout: 15).flatMap(MQTTMessage.init)
        XCTAssertFalse(first?.payload.isEmpty ?? true, "the entity exists without redaction")
        try (settings + "redact-numbers = true\n").write(toFile: config, atomically: true, encoding: .utf8)
        watch.signal(SIGHUP)
        let removed = sub.readLine(timeout: 15).flatMap(MQTTMessage.init)
        XCTAssertEqual(removed?.payload, "", "an empty config removes it:\n\(watch.log())")
    }
}
