import CallMonitor
import Contacts
import Pipeline
import TestSupport
import XCTest
@testable import MQTTExport

/// The retained state's last callers carry the names their events carried: the contact is looked
/// up once, as the call rang, not again each time the state is published.
final class MQTTRetainedStateTests: XCTestCase {
    func testTheLastCallerKeepsTheNameItsRingCarriedAfterTheContactsChange() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.path + "/contacts.tsv"
        try Files.write(file, "+15550001\tAlice\n")
        var problems: [String] = []
        let contacts = ContactDirectory(path: file, loop: nil) { problems.append($0) }
        var state = MQTTRetainedState(topics: MQTTTopics(root: "telwatch", discoveryPrefix: "homeassistant"),
                                      schema: EventSchema())
        let ringing = CallSnapshot(id: "a", key: mmKey(0), modem: ModemPath(mmModem), direction: .incoming,
                                   number: "+15550001", name: "Network Name", state: .incoming, detail: .ringing,
                                   firstSeen: 1_780_000_000)
        let ring = Delivery(.calls([.transition(ringing, previous: nil)], time: 1_780_000_000), liveCalls: 1,
                            contacts: contacts)
        state.note(ring)
        XCTAssertTrue(ring.records.first?.line.contains(#""contact":"Alice""#) ?? false, "\(ring.records.map(\.line))")

        try Files.write(file, "+15550001\tBob\n")
        contacts.reload()
        XCTAssertEqual(problems, [])
        let published = try XCTUnwrap(state.retainedMessages().first { $0.topic == "telwatch/state" })
        let object = try XCTUnwrap(JSONLine.object(String(decoding: published.payload, as: UTF8.self)))
        XCTAssertEqual(object["last_caller_name"] as? String, "Alice", "the name the ring's line carried")
    }

    /// A deflected call is blocked as a rejected one (Home Assistant's "Calls blocked today"), and
    /// never rings there; a deflection that failed and then a hang-up that failed rang, and is not.
    func testADeflectedCallIsBlockedAndNeverRings() {
        var state = MQTTRetainedState(topics: MQTTTopics(root: "telwatch", discoveryPrefix: "homeassistant"),
                                      schema: EventSchema())
        let time = 1_780_000_000.0
        let ringing = CallSnapshot(id: "d", key: mmKey(0), modem: ModemPath(mmModem), direction: .incoming,
                                   number: "+19005550100", state: .incoming, detail: .ringing, firstSeen: time)
        state.note(Delivery(.calls([.transition(ringing, previous: nil)], time: time), liveCalls: 1))
        var screened = ScreenedCall(call: ringing, decision: ScreeningDecision(
            action: .deflect, rule: .block, deflectTo: "+15559876543"), deflection: .requested)
        state.note(Delivery(.screened(screened, time: time), liveCalls: 1))
        XCTAssertEqual(state.blockedToday, 1)
        XCTAssertEqual(state.summary, "idle", "it never rang for the user")
        screened.deflection = .failed("no CTFR")
        screened.hangup = .failed("not authorized")
        state.note(Delivery(.screened(screened, time: time), liveCalls: 1))
        XCTAssertEqual(state.blockedToday, 0, "it rang after all")
        XCTAssertEqual(state.summary, "ringing")
    }
}
