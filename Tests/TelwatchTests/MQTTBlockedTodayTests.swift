import CallMonitor
import Loop
import Pipeline
import TestSupport
import XCTest
@testable import MQTTExport

/// Home Assistant's "calls blocked today" counts the calls of the local day their `screened` event
/// happened on, the time its delivery carries: a block of a day that is over by the time it is
/// delivered (the device slept across midnight mid-turn) is not shown as today's all day long.
final class MQTTBlockedTodayTests: XCTestCase {
    private var fixture: BusFixture?
    private var scratch: ScratchDirectory?

    override func tearDown() {
        fixture?.stop()
        fixture = nil
        scratch?.remove()
        scratch = nil
    }

    private func screened(_ id: String, number: String, at time: Double) -> Delivery {
        let call = CallSnapshot(id: id, key: mmKey(Int(id) ?? 0), modem: ModemPath(mmModem), direction: .incoming,
                                number: number, name: "", state: .incoming, detail: .ringing, firstSeen: time)
        let decision = ScreeningDecision(action: .reject, rule: .block, source: "screening.conf:1")
        return Delivery(.screened(ScreenedCall(call: call, decision: decision, hangup: .requested), time: time), liveCalls: 1)
    }

    func testABlockOfADayAlreadyOverIsNotCountedAsToday() throws {
        let fixture = try BusFixture()
        self.fixture = fixture
        let scratch = try ScratchDirectory()
        self.scratch = scratch
        let broker = try MosquittoBroker(fixture: fixture, directory: scratch.path)
        let loop = try EventLoop()
        var settings = MQTTSettings(broker: try XCTUnwrap(MQTTBroker(url: broker.url)), topic: "blocked-test")
        settings.homeAssistant = false
        var problems: [String] = []
        let sink = MQTTSink(settings: settings, schema: EventSchema(), loop: loop, stateDirectory: nil,
                            countsBlockedCalls: true, countsMissedCalls: false, report: { problems.append($0) })
        let subscriber = try broker.subscribe(["blocked-test/state"])
        // The subscriber is a pipe the loop does not watch: a tick wakes it to look.
        let tick = try loop.timer {}
        tick.schedule(after: 0.05, repeating: 0.05)
        var states: [[String: Any]] = []
        /// Whether a state was published since the last look that `holds`.
        func published(_ holds: ([String: Any]) -> Bool) -> Bool {
            while let message = subscriber.nextMessage(on: "blocked-test/state", timeout: 0.01) {
                if let object = message.object { states.append(object) }
            }
            return states.last.map(holds) ?? false
        }
        func blocked(_ count: Int) -> ([String: Any]) -> Bool { { $0["blocked_today"] as? Int == count } }

        sink.receive(Delivery(.ready(time: wallClockNow()), liveCalls: 0))
        XCTAssertTrue(loop.run(until: { published(blocked(0)) }, timeout: 15), "the state before any block: \(states) \(problems)")

        // Some 36 hours ago is on an earlier local day whatever the time zone and its shifts. The
        // count may show it for a moment, not for the rest of today: the state a call ringing now
        // republishes comes to say 0.
        sink.receive(screened("1", number: "+19005550100", at: wallClockNow() - 36 * 3600))
        let now = wallClockNow()
        let ringing = CallSnapshot(id: "3", key: mmKey(3), modem: ModemPath(mmModem), direction: .incoming,
                                   number: "+15550003", name: "", state: .incoming, detail: .ringing, firstSeen: now)
        sink.receive(Delivery(.calls([.transition(ringing, previous: nil)], time: now), liveCalls: 1))
        XCTAssertTrue(loop.run(until: { published { $0["last_caller"] as? String == "+15550003" && blocked(0)($0) } },
                               timeout: 5), "a block of an earlier day is not today's: \(states)")

        sink.receive(screened("2", number: "+19005550101", at: wallClockNow()))
        XCTAssertTrue(loop.run(until: { published(blocked(1)) }, timeout: 10), "today's block counts: \(states)")

        tick.cancel()
        var finished = false
        sink.finish { finished = true }
        XCTAssertTrue(loop.run(until: { finished }, timeout: 10))
        XCTAssertEqual(problems, [])
    }
}
