import CallMonitor
import Glibc
import Pipeline
import XCTest
@testable import telwatch

/// The `--json` stream on stdout: each event is exactly its schema's JSON object and a newline,
/// whether the line goes out at once or with the rest of its loop turn.
final class JSONStreamLineTests: XCTestCase {
    private func ring() -> PipelineEvent {
        var tracker = CallTracker(makeID: { "call-1" })
        let key = CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/1")
        let events = tracker.apply(.callAppeared(key, modem: "/org/freedesktop/ModemManager1/Modem/0", CallObservation(
            phase: .live(.incoming, .ringing), direction: .incoming, number: "+15550001\"x"), initial: false),
                                   at: 1_796_306_857.25)
        return .calls(events, time: 1_796_306_857.25)
    }

    /// What the stream carries for `delivery`, read back from a pipe.
    private func streamed(_ delivery: Delivery, holdingLines: Bool) throws -> String {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let writer = LineWriter(fd: fds[1])
        writer.holdsLines = holdingLines
        let sink = OutputSink(output: writer, json: true, verbosity: .normal, schema: EventSchema())
        sink.receive(delivery)
        sink.flush()
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func testEachEventIsItsSchemaLineAndANewlineHeldOrNot() throws {
        let delivery = Delivery(ring(), liveCalls: 1)
        let expected = delivery.records.map { $0.line + "\n" }.joined()
        XCTAssertTrue(expected.hasPrefix("{\"event\":\"incoming\""), expected)
        XCTAssertTrue(expected.contains("\"number\":\"+15550001\\\"x\""), expected)
        XCTAssertTrue(expected.hasSuffix("}\n"), expected)
        XCTAssertEqual(try streamed(delivery, holdingLines: false), expected)
        XCTAssertEqual(try streamed(delivery, holdingLines: true), expected)
    }
}
