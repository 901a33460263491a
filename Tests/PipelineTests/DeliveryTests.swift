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
}
