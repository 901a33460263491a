import CallMonitor
import XCTest
@testable import Pipeline

/// The `live-calls` record gives the next telwatch the calls exactly as they were, and nothing
/// it cannot trust (docs/modem-stacks.md §1.8).
final class LiveCallsRecordTests: XCTestCase {
    let answered = CallSnapshot(
        id: "0f9b5d3c-1a2b-4c3d-8e4f-5a6b7c8d9e0f", key: CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/3"),
        modem: "/org/freedesktop/ModemManager1/Modem/0", direction: .incoming, number: "+1555\n0=1\\x",
        state: .connected, detail: .held, firstSeen: 1_780_000_000.123456, connectedAt: 1_780_000_004.987654)
    let ringing = CallSnapshot(
        id: "1f9b5d3c-1a2b-4c3d-8e4f-5a6b7c8d9e0f", key: CallKey(backend: .ofono, path: "/ril_0/voicecall01"),
        modem: "/ril_0", direction: .incoming, number: "", state: .incoming, detail: .waiting, firstSeen: 1_780_000_010)

    func testCallsComeBackExactlyAsTheyWere() {
        let text = LiveCallsRecord.encode([answered, ringing])
        XCTAssertEqual(LiveCallsRecord.decode(text, since: 0), [RememberedCall(answered), RememberedCall(ringing)],
                       "every digit of the times, and any number, survive")
        XCTAssertEqual(LiveCallsRecord.encode([]), "", "no call live: an empty record")
        XCTAssertEqual(LiveCallsRecord.decode("\n\n\n", since: 0), [], "emptied in place")
    }

    func testWhatCannotBeTrustedIsLeftOut() {
        let text = LiveCallsRecord.encode([answered, ringing])
        XCTAssertEqual(LiveCallsRecord.decode(text, since: 1_780_000_005).map(\.id), [ringing.id],
                       "a call first seen before the boot is no live call")
        XCTAssertEqual(LiveCallsRecord.decode(text.replacingOccurrences(of: "0.state=connected", with: "0.state=odd"),
                                              since: 0).map(\.id), [ringing.id], "a call not whole is left out")
        XCTAssertEqual(LiveCallsRecord.decode(text.replacingOccurrences(of: "1.first_seen=1780000010.0", with: "1.first_seen=nan"),
                                              since: 0).map(\.id), [answered.id], "a time must be one")
        XCTAssertNil(LiveCallsRecord.decode(text.replacingOccurrences(of: "0.connected_at=1780000004.987654",
                                                                      with: "0.connected_at=inf"), since: 0).first?.connectedAt)
        XCTAssertEqual(LiveCallsRecord.decode("garbage", since: 0), [])
        XCTAssertEqual(LiveCallsRecord.decode(text.replacingOccurrences(of: "version=1", with: "version=2"), since: 0), [])
    }

    /// A call answered, held, ended among others: the record kept call by call says what
    /// encoding them all says, and a hold changes nothing the next telwatch reads.
    func testTheRecordKeptCallByCallIsTheWholeRecord() {
        func call(_ place: Int) -> CallSnapshot {
            CallSnapshot(id: "\(place)f9b5d3c-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
                         key: CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/\(place)"),
                         modem: "/org/freedesktop/ModemManager1/Modem/0", direction: .incoming, number: "+1555010\(place)",
                         state: .incoming, detail: .ringing, firstSeen: 1_780_000_000.25 + Double(place))
        }
        var calls = (0..<3).map(call)
        var record = LiveCallsRecordText()
        XCTAssertFalse(record.update([]), "no call, no record: nothing to write")
        XCTAssertTrue(record.update(calls))
        XCTAssertEqual(record.text, LiveCallsRecord.encode(calls))

        calls[1].state = .connected
        calls[1].detail = .active
        calls[1].connectedAt = 1_780_000_009.5
        XCTAssertTrue(record.update(calls), "answered")
        XCTAssertEqual(record.text, LiveCallsRecord.encode(calls))
        calls[1].detail = .held
        XCTAssertFalse(record.update(calls), "held: the next telwatch finds the same connected call")

        calls.remove(at: 0)
        XCTAssertTrue(record.update(calls), "the first ended: the others move up")
        XCTAssertEqual(record.text, LiveCallsRecord.encode(calls))
        XCTAssertEqual(LiveCallsRecord.decode(record.text, since: 0), calls.map(RememberedCall.init))
        XCTAssertTrue(record.update([]))
        XCTAssertEqual(record.text, "", "the last ended: an empty record")
    }

    /// A full record: a call past its places changes nothing it holds.
    func testACallPastAFullRecordChangesNothing() {
        let calls = (0..<(LiveCallsRecord.limit + 1)).map { place in
            CallSnapshot(id: CallID.random(), key: CallKey(backend: .ofono, path: "/ril_0/voicecall\(place)"), modem: "/ril_0",
                         direction: .outgoing, number: "\(place)", state: .dialing, detail: .dialing, firstSeen: Double(place))
        }
        var record = LiveCallsRecordText()
        XCTAssertTrue(record.mayHold(calls[LiveCallsRecord.limit].id), "nothing recorded yet")
        XCTAssertTrue(record.update(calls))
        XCTAssertEqual(record.text, LiveCallsRecord.encode(calls))
        XCTAssertTrue(record.mayHold(calls[0].id))
        XCTAssertFalse(record.mayHold(calls[LiveCallsRecord.limit].id))
        var later = calls
        later[LiveCallsRecord.limit].state = .connected
        XCTAssertFalse(record.update(later), "the 65th call answered: not in the record")
    }
}
