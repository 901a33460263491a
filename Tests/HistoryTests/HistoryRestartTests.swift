import CallMonitor
import Pipeline
import TestSupport
import XCTest
@testable import History

/// A call that outlives a telwatch restart or crash: ModemManager and oFono keep its object, so the
/// next telwatch finds it live at start and its history goes on in the row it had (one call, one
/// row, its real answer time); what an earlier telwatch left open and is not found again was
/// closed while nobody looked (`unknown`).
final class HistoryRestartTests: HistoryTestCase {
    private func foundAtStart(_ n: Int, _ number: String, connected: Bool = true) {
        apply(.callAppeared(mmKey(n), modem: mmModem, CallObservation(
            phase: connected ? .live(.connected, .active) : .live(.incoming, .ringing), direction: .incoming,
            number: number), initial: true))
    }

    /// The next telwatch: a new tracker (new call ids), given the calls the last one left live as
    /// its `live-calls` record keeps them, its start's sync, then `ready`.
    private func restart(finding calls: () -> Void) {
        let left = tracker.liveCalls.map(RememberedCall.init)
        tracker = CallTracker(makeID: { "id-after-\(UUID().uuidString)" })
        tracker.remember(left)
        let history = startSink(ready: false)
        calls()
        history.receive(Delivery(.ready(time: now), liveCalls: tracker.liveCount))
        turn()
    }

    private func answeredThenLeft(killed: Bool) throws -> (id: String, answeredAt: Double) {
        startSink()
        ring(1, "+15550001")
        turn()
        now += 2
        change(1, .live(.connected, .active))
        turn()
        let first = try XCTUnwrap(rows().first)
        if killed {
            sink = nil
        } else {
            sink?.finish {}
            sink = nil
        }
        return (first.callID, try XCTUnwrap(first.connectedAt))
    }

    private func checkOneRow(_ before: (id: String, answeredAt: Double), endedAt: Double) throws {
        let all = try rows()
        XCTAssertEqual(all.count, 1, "one call, one row: \(all.map { "\($0.callID) \($0.state)" })")
        let row = try XCTUnwrap(all.first)
        XCTAssertEqual(row.callID, before.id, "the row the call had")
        XCTAssertEqual(row.state, "disconnected")
        XCTAssertEqual(row.connectedAt, before.answeredAt, "answered when it was, not when telwatch came back")
        XCTAssertEqual(row.endedAt, endedAt)
        XCTAssertEqual(row.duration, endedAt - before.answeredAt, "talk time from the answer")
        XCTAssertFalse(row.initial, "first seen ringing, not live at start")
        XCTAssertFalse(row.missed)
        XCTAssertEqual(reports.filter { $0.contains("closed as unknown") }, [])
    }

    func testACallThatOutlivesACrashStaysOneRowWithItsRealAnswer() throws {
        let before = try answeredThenLeft(killed: true)
        now += 10
        restart { foundAtStart(1, "+15550001") }
        XCTAssertEqual(try rows().map(\.state), ["connected"], "live again, in its row")
        now += 5
        end(1)
        turn()
        try checkOneRow(before, endedAt: now)
    }

    func testACallThatOutlivesACleanRestartStaysOneRowWithItsRealAnswer() throws {
        let before = try answeredThenLeft(killed: false)
        XCTAssertEqual(try rows().map(\.state), ["unknown"], "while no telwatch runs, its end is not known")
        now += 3
        restart { foundAtStart(1, "+15550001") }
        now += 4
        end(1)
        turn()
        try checkOneRow(before, endedAt: now)
    }

    func testAnUnansweredCallRingingAcrossARestartIsOneMissedRow() throws {
        startSink()
        ring(1, "+15550001")
        turn()
        let first = try XCTUnwrap(rows().first)
        sink = nil
        now += 4
        restart { foundAtStart(1, "+15550001", connected: false) }
        now += 4
        end(1)
        turn()
        let all = try rows()
        XCTAssertEqual(all.count, 1, "\(all)")
        XCTAssertEqual(all.first?.callID, first.callID)
        XCTAssertEqual(all.first?.firstSeen, first.firstSeen)
        XCTAssertEqual(all.first?.missed, true)
        XCTAssertEqual(all.first?.unseen, true)
    }

    func testACallGoneMeanwhileIsUnknownAndANewCallOnItsPathIsAnotherRow() throws {
        _ = try answeredThenLeft(killed: true)
        now += 10
        // The stack was restarted too: the same path, another caller.
        restart { foundAtStart(1, "+15550999") }
        XCTAssertEqual(reports, ["history: 1 call left live by a telwatch that stopped before its end was closed as unknown"])
        end(1)
        turn()
        let all = try rows().sorted { $0.firstSeen < $1.firstSeen }
        XCTAssertEqual(all.map(\.state), ["unknown", "disconnected"])
        XCTAssertEqual(all.map(\.number), ["+15550001", "+15550999"])
        XCTAssertEqual(all.last?.initial, true, "found live at start")
    }

    func testARowFromBeforeTheBootIsNeverContinued() throws {
        let before = try answeredThenLeft(killed: true)
        now += 10
        tracker = CallTracker(makeID: { "id-after-boot" })
        // The record's reader leaves out calls from before the boot; the row is judged alone.
        var settings = HistorySettings(directory: directory, keep: nil)
        settings.bootTime = before.answeredAt + 1
        let history = HistorySink(settings: settings, loop: loop, clock: { [unowned self] in self.now },
                                  report: { [unowned self] in self.reports.append($0) })
        sink = history
        foundAtStart(1, "+15550001")
        history.receive(Delivery(.ready(time: now), liveCalls: tracker.liveCount))
        turn()
        XCTAssertEqual(try rows().count, 2, "a call cannot outlive a reboot: same path and number or not")
    }
}
