import DBus
import Glibc
import TestSupport
import XCTest

/// `tones` (docs/user-guide.md): what the far end presses on an answered call, on the event stream
/// (JSON and text) and to a `tones` hook, with hostile input filtered, bounded and counted.
final class TonesCommandTests: CommandTestCase {
    static let call = "org.freedesktop.ModemManager1.Call"

    /// A call rung on the fake ModemManager and answered; returns its path and its id.
    private func answeredCall(_ watch: TestProcess) throws -> (path: String, id: String) {
        let call = try ring("+15550006")
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"), watch.log())
        try mm(call, Self.call, "Accept")
        XCTAssertNotNil(nextEvent(watch, "connected"), watch.log())
        return (call, try XCTUnwrap(incoming["call_id"] as? String))
    }

    private func hear(_ call: String, _ dtmf: String, times: UInt32 = 1) throws {
        try control("HearTones", [.objectPath(try ObjectPath(call)), .string(dtmf), .uint32(times)])
    }

    func testTonesReachTheJSONStreamAndAHookFilteredAndCounted() throws {
        let (hooks, reader) = try recordingHook(
            "tones", printing: "$TELWATCH_EVENT|$TELWATCH_CALL_ID|$TELWATCH_TONES|$TELWATCH_TONES_DROPPED|$TELWATCH_NUMBER")
        // A writer of our own: the FIFO does not read as ended between one hook and the next.
        let writer = open(logind.directory + "/hook-record", O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        defer { close(reader); close(writer) }
        let hookLines = LineReader(fd: reader)
        try startModemManager()
        let watch = try startWatch(["--hooks", hooks])
        let (call, id) = try answeredCall(watch)

        try hear(call, "1;rm -rf /")
        let tones = try XCTUnwrap(nextEvent(watch, "tones"), watch.log())
        XCTAssertEqual(Array(tones.keys).sorted(), ["backend", "call_id", "contact", "direction", "dropped", "event",
                                                    "live_calls", "modem", "number", "time", "tones"])
        XCTAssertEqual(tones["call_id"] as? String, id)
        XCTAssertEqual(tones["tones"] as? String, "1")
        XCTAssertEqual(tones["dropped"] as? Int, 9)
        XCTAssertEqual(tones["number"] as? String, "+15550006")
        XCTAssertEqual(hookLines.next(timeout: 10), .line("tones|\(id)|1|9|+15550006"))

        // A flood: a few events, every signal accounted for, the hook run once per event.
        try hear(call, "#", times: 1_000)
        var kept = 0, dropped = 0, events = 0
        while kept + dropped < 1_000, let line = nextEvent(watch, "tones") {
            events += 1
            kept += (line["tones"] as? String)?.count ?? 0
            dropped += line["dropped"] as? Int ?? 0
            XCTAssertLessThanOrEqual((line["tones"] as? String)?.count ?? 0, 64)
        }
        XCTAssertEqual(kept + dropped, 1_000, watch.log())
        XCTAssertLessThan(events, 20)
        for _ in 0..<events {
            guard case .line(let line) = hookLines.next(timeout: 10) else { return XCTFail("a hook did not run") }
            XCTAssertTrue(line.hasPrefix("tones|\(id)|#"), line)
        }
        watch.signal(SIGTERM)
        XCTAssertNotNil(watch.wait(timeout: 10))
    }

    func testTheTextStreamShowsTonesEscapedAndWhatWasDropped() throws {
        try startModemManager()
        let watch = try telwatch(["--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory])
        XCTAssertNotNil(watch.readLine(timeout: 15, where: { $0.contains("synced") }), watch.log())
        let call = try ring("+15550007")
        XCTAssertNotNil(watch.readLine(timeout: 10, where: { $0.contains("incoming") }), watch.log())
        try mm(call, Self.call, "Accept")
        XCTAssertNotNil(watch.readLine(timeout: 10, where: { $0.contains("connected") }), watch.log())
        try hear(call, "\u{1B}[2J4\u{07}")
        let line = try XCTUnwrap(watch.readLine(timeout: 10, where: { $0.contains("tones") }), watch.log())
        XCTAssertTrue(line.contains(" 24 "), line)
        XCTAssertTrue(line.hasSuffix("(4 dropped)"), line)
        XCTAssertFalse(line.unicodeScalars.contains { $0.value < 0x20 }, "no control character printed: \(line)")
        watch.signal(SIGTERM)
        XCTAssertNotNil(watch.wait(timeout: 10))
    }

    /// The built-in simulator's `tones` (its ModemManager's `DtmfReceived`, here Quectel's ASCII
    /// code as ModemManager 1.24 passes it on) reaches the stream as the tone.
    func testTheSimulatorsTonesReachTheStream() throws {
        let script = logind.directory + "/tones.txt"
        // The pause lets telwatch read the call first: tones on a call it does not follow yet are
        // ignored, as they must be.
        try "ring +15550108\nanswer c1\nsleep 3\ntones c1 35\ntones c1 1\nsleep 0.5\nhangup c1\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager",
                                  "--state-dir", stateDirectory])
        XCTAssertNotNil(nextEvent(watch, "backend", timeout: 15))  // waiting for ModemManager
        let simulator = try telwatch(["simulate", "--bus", fixture.address, script])
        defer { simulator.terminate(); watch.terminate() }
        var seen: [[String: Any]] = []
        XCTAssertNotNil(nextEvent(watch, "disconnected", timeout: 15, seen: &seen), watch.log() + simulator.log())
        let tones = seen.filter { $0["event"] as? String == "tones" }
        XCTAssertEqual(tones.map { $0["tones"] as? String ?? "?" }.joined(), "#1", "\(seen)")
        XCTAssertEqual(Set(tones.map { $0["call_id"] as? String ?? "?" }),
                       Set(seen.filter { $0["event"] as? String == "connected" }.map { $0["call_id"] as? String ?? "" }))
        XCTAssertEqual(seen.last?["event"] as? String, "disconnected")
    }

    /// The D-Bus API's `Event` carries a `tones` as the JSON line does (`EventSchema`), and
    /// `telwatch events` shows it, as JSON and as an escaped text line.
    func testTheAPIsEventAndTelwatchEventsCarryTones() throws {
        try startModemManager()
        let watch = try startWatch()
        let client = try MonitorAPITests.Client(logind)
        defer { client.close() }
        let json = try telwatch(["events", "--json", "--verbose", "--bus", fixture.address])
        let text = try telwatch(["events", "--verbose", "--bus", fixture.address])
        defer { json.terminate(); text.terminate() }
        for follower in [json, text] {
            let following = Files.waitUntil(try XCTUnwrap(follower.logPath), timeout: 10) {
                follower.log().contains("following the telwatch service")
            }
            XCTAssertTrue(following, follower.log())
        }
        let (call, id) = try answeredCall(watch)
        try hear(call, "9\u{1B}[m")
        let line = try XCTUnwrap(watch.readLine(timeout: 10, where: { $0.contains(#""event":"tones""#) }), watch.log())

        XCTAssertTrue(logind.run(until: { client.events.contains { $0.name == "tones" } }))
        let event = try XCTUnwrap(client.events.first { $0.name == "tones" })
        XCTAssertEqual(event.fields.map(\.key), ["event", "time", "call_id", "backend", "modem", "direction", "number",
                                                 "contact", "tones", "dropped", "live_calls"])
        XCTAssertEqual(event.fields.first { $0.key == "call_id" }?.value.string, id)
        XCTAssertEqual(event.fields.first { $0.key == "tones" }?.value.string, "9")
        XCTAssertEqual(json.readLine(timeout: 10, where: { $0.contains(#""event":"tones""#) }), line)
        let shown = try XCTUnwrap(text.readLine(timeout: 10, where: { $0.contains("tones") }), text.log())
        XCTAssertTrue(shown.contains(String(id.prefix(8)) + " 9 "), shown)
        XCTAssertTrue(shown.hasSuffix("(3 dropped)"), shown)
        XCTAssertFalse(shown.unicodeScalars.contains { $0.value < 0x20 }, shown)
    }
}
