import CallMonitor
import Contacts
import Loop
import Pipeline
import TestSupport
import XCTest

/// Each event is stamped once at the pipeline's entrance, and every sink reads that stamp: the
/// event stream, the hooks and MQTT never disagree about one event.
final class DeliveryTests: XCTestCase {
    /// Records what each sink was handed.
    private final class Recorder: EventSink {
        var deliveries: [Delivery] = []
        let onReceive: (Delivery) -> Void
        init(onReceive: @escaping (Delivery) -> Void = { _ in }) { self.onReceive = onReceive }
        func receive(_ delivery: Delivery) {
            deliveries.append(delivery)
            onReceive(delivery)
        }
    }

    private func ring(_ number: String) -> PipelineEvent {
        var tracker = CallTracker()
        let key = CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/1")
        let events = tracker.apply(.callAppeared(key, modem: "/org/freedesktop/ModemManager1/Modem/0", CallObservation(
            phase: .live(.incoming, .ringing), direction: .incoming, number: number), initial: false), at: 1_796_306_857.25)
        return .calls(events, time: 1_796_306_857.25)
    }

    /// The contacts file re-read while one event is being delivered (the first sink's doing
    /// here; inotify between two events in the daemon) changes nothing for that event: its
    /// contact was looked up once, as it entered, and a later sink gets the same.
    func testEverySinkOfAnEventGetsTheContactLookedUpAsItEntered() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/contacts.tsv"
        try Files.write(path, "+15550001\tAda\n")
        let contacts = ContactDirectory(path: path, loop: nil) { XCTFail($0) }
        let pipeline = EventPipeline(liveCalls: { 1 }, contacts: contacts)
        let first = Recorder { _ in
            try? Files.write(path, "+15550001\tGrace\n")
            contacts.reload()
        }
        let second = Recorder()
        pipeline.append(first)
        pipeline.append(second)
        pipeline.send(ring("+15550001"))
        XCTAssertEqual(contacts.name(for: "+15550001"), "Grace", "the file was read again")
        XCTAssertEqual(second.deliveries.first?.contact(of: "+15550001"), "Ada")
        XCTAssertTrue(second.deliveries.first?.records.first?.line.contains("\"contact\":\"Ada\"") == true)
    }

    /// One delivery per event, shared by every sink, its JSON built once: the `--json` line and
    /// MQTT's payload are the same bytes (MQTT adds `seq` to its copy).
    func testEverySinkGetsOneDeliveryWhoseJSONIsBuiltOnceAndCopiedByWhoAddsKeys() throws {
        let pipeline = EventPipeline(liveCalls: { 1 }, schema: EventSchema(redactNumbers: true))
        let first = Recorder()
        let second = Recorder()
        pipeline.append(first)
        pipeline.append(second)
        pipeline.send(ring("+15550001"))
        let delivery = try XCTUnwrap(first.deliveries.first)
        XCTAssertTrue(second.deliveries.first === delivery)
        XCTAssertEqual(delivery.liveCalls, 1)
        var copy = try XCTUnwrap(delivery.records.first)
        copy.add("seq", 7)
        let line = try XCTUnwrap(delivery.records.first?.line)
        XCTAssertTrue(line.contains("\"number\":\"*******01\""), line)
        XCTAssertTrue(line.contains("\"time\":\"2026-12-03T") && !line.contains("seq"), line)
        XCTAssertEqual(copy.line, String(line.dropLast()) + ",\"seq\":7}")
    }

    /// A storm's lines keep what stays the same of each live call from one line to the next
    /// (`CallLineParts`): every line is still exactly the schema's, written afresh, whatever
    /// changed in between (a number, a name, the modem's identity, the redaction, a second call on
    /// the same path after the first ended).
    func testEveryLineOfACallIsTheSchemasOwnWhateverChangedBetweenTwo() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let path = scratch.path + "/contacts.tsv"
        try Files.write(path, "+15550002\tAda \"the\" caller\n")
        let contacts = ContactDirectory(path: path, loop: nil) { XCTFail($0) }
        var tracker = CallTracker()
        let pipeline = EventPipeline(liveCalls: { tracker.liveCount }, contacts: contacts)
        var lines: [(got: String, expected: String)] = []
        pipeline.append(Recorder { delivery in
            var expected: [String] = []
            delivery.schema.records(of: delivery.event, liveCalls: delivery.liveCalls,
                                    contact: delivery.contact(of:)) { expected.append($0.line) }
            XCTAssertEqual(delivery.records.count, expected.count)
            for (got, wanted) in zip(delivery.records, expected) { lines.append((got.line, wanted)) }
        })
        let modem = "/org/freedesktop/ModemManager1/Modem/0"
        let keys = (1...2).map { CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/\($0)") }
        var time = 1_796_306_857.25
        func apply(_ event: BackendEvent) {
            time += 0.5
            let events = tracker.apply(event, at: time)
            if !events.isEmpty { pipeline.send(.calls(events, time: time)) }
        }
        func change(_ key: CallKey, _ observation: CallObservation) { apply(.callChanged(key, observation)) }
        for key in keys {
            apply(.callAppeared(key, modem: modem, CallObservation(phase: .live(.incoming, .ringing),
                                                                    direction: .incoming), initial: false))
        }
        change(keys[0], CallObservation(number: "+15550001"))
        change(keys[1], CallObservation(phase: .live(.incoming, .waiting)))
        change(keys[0], CallObservation(phase: .live(.connected, .active), reason: "accepted"))
        change(keys[0], CallObservation(number: "+15550002"))
        apply(.modemIdentified(.modemManager, modem: modem,
                               ModemIdentity(equipmentID: "35000\"1", ownNumber: "+15559999", operatorName: "Op")))
        change(keys[0], CallObservation(phase: .live(.connected, .held)))
        pipeline.schema = EventSchema(redactNumbers: true)
        change(keys[0], CallObservation(phase: .live(.connected, .active)))
        pipeline.schema = EventSchema()
        change(keys[0], CallObservation(name: "Grace", multiparty: true))
        change(keys[0], CallObservation(phase: .live(.connected, .held)))
        change(keys[0], CallObservation(phase: .ended, reason: "remote"))
        apply(.callRemoved(keys[0], reason: .removed))
        apply(.callAppeared(keys[0], modem: modem, CallObservation(phase: .live(.dialing, .dialing),
                                                                    direction: .outgoing, number: "+15550003"),
                            initial: false))
        change(keys[0], CallObservation(phase: .live(.connected, .active)))
        change(keys[1], CallObservation(phase: .ended))
        change(keys[0], CallObservation(phase: .ended))
        XCTAssertEqual(lines.count, 16)
        for (got, expected) in lines { XCTAssertEqual(got, expected) }
        XCTAssertTrue(lines.contains { $0.got.contains("\"contact\":\"Ada \\\"the\\\" caller\"") })
        XCTAssertTrue(lines.contains { $0.got.contains("\"number\":\"*******02\"") })
        XCTAssertTrue(lines.contains { $0.got.contains("\"modem_id\":\"35000\\\"1\"") })
    }
}
