import XCTest
@testable import CallMonitor

final class StateMappingTests: XCTestCase {
    // MARK: ModemManager

    func testModemManagerKnownStates() {
        typealias M = ModemManagerMapping
        for direction in ModemManagerCallDirection.allCases {
            XCTAssertEqual(M.phase(state: .dialing, direction: direction), .live(.dialing, .dialing))
            XCTAssertEqual(M.phase(state: .ringingOut, direction: direction), .live(.dialing, .alerting))
            XCTAssertEqual(M.phase(state: .ringingIn, direction: direction), .live(.incoming, .ringing))
            XCTAssertEqual(M.phase(state: .active, direction: direction), .live(.connected, .active))
            XCTAssertEqual(M.phase(state: .held, direction: direction), .live(.connected, .held))
            XCTAssertEqual(M.phase(state: .terminated, direction: direction), .ended)
        }
    }

    func testModemManagerWaitingDependsOnDirection() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.phase(state: .waiting, direction: .incoming), .live(.incoming, .waiting))
        XCTAssertEqual(M.phase(state: .waiting, direction: .outgoing), .live(.dialing, .alerting))
        XCTAssertEqual(M.phase(state: .waiting, direction: .unknown), .live(.incoming, .waiting))
        XCTAssertEqual(M.phase(state: .waiting, direction: ModemManagerCallDirection(bus: -5)), .live(.incoming, .waiting))
        XCTAssertEqual(M.phase(state: .waiting, direction: ModemManagerCallDirection(bus: .max)), .live(.incoming, .waiting))
    }

    func testModemManagerUnknownStateIsDialingOnlyWhenOutgoing() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.phase(state: .unknown, direction: .outgoing), .live(.dialing, .dialing))
        XCTAssertEqual(M.phase(state: .unknown, direction: .incoming), .unknown("0"))
        XCTAssertEqual(M.phase(state: .unknown, direction: .unknown), .unknown("0"))
        XCTAssertEqual(M.phase(state: .unknown, direction: ModemManagerCallDirection(bus: 42)), .unknown("0"))
    }

    func testModemManagerOutOfRangeStatesAreUnknownVerbatim() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.phase(state: ModemManagerValue(raw: 8), direction: .incoming), .unknown("8"))
        XCTAssertEqual(M.phase(state: ModemManagerValue(raw: -1), direction: .outgoing), .unknown("-1"))
        XCTAssertEqual(M.phase(state: ModemManagerValue(raw: .max), direction: .unknown), .unknown("2147483647"))
        XCTAssertEqual(M.phase(state: ModemManagerValue(raw: .min), direction: .unknown), .unknown("-2147483648"))
        XCTAssertNil(ModemManagerValue<ModemManagerCallState>(raw: 8).known)
    }

    func testModemManagerKnownStatesAsTheyComeOffTheBus() {
        for state in ModemManagerCallState.allCases {
            let value = ModemManagerValue<ModemManagerCallState>(raw: state.rawValue)
            XCTAssertEqual(value.known, state)
            XCTAssertEqual(value, ModemManagerValue(state))
            XCTAssertEqual(ModemManagerMapping.phase(state: value, direction: .incoming),
                           ModemManagerMapping.phase(state: state, direction: .incoming))
        }
        XCTAssertEqual(ModemManagerCallState.allCases.map(\.rawValue), Array(0...7), "0 UNKNOWN … 7 TERMINATED")
    }

    func testModemManagerDirection() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.direction(.unknown), .unknown)
        XCTAssertEqual(M.direction(.incoming), .incoming)
        XCTAssertEqual(M.direction(.outgoing), .outgoing)
        XCTAssertEqual(ModemManagerCallDirection.allCases.map(\.rawValue), [0, 1, 2])
        XCTAssertEqual(ModemManagerCallDirection(bus: ModemManagerCallDirection.outgoing.rawValue), .outgoing)
        XCTAssertEqual(ModemManagerCallDirection(bus: 3), .unknown)
        XCTAssertEqual(ModemManagerCallDirection(bus: -1), .unknown)
        XCTAssertEqual(ModemManagerCallDirection(bus: .min), .unknown)
    }

    func testModemManagerReasons() {
        typealias M = ModemManagerMapping
        let expected = ["unknown", "outgoing-started", "incoming-new", "accepted", "terminated",
                        "refused-or-busy", "error", "audio-setup-failed", "transferred", "deflected"]
        XCTAssertEqual(ModemManagerCallStateReason.allCases.map(\.word), expected)
        XCTAssertEqual(ModemManagerCallStateReason.allCases.map(\.rawValue), Array(0...9))
        for reason in ModemManagerCallStateReason.allCases {
            XCTAssertEqual(M.reason(ModemManagerValue(raw: reason.rawValue)), reason.word)
            XCTAssertEqual(M.reason(UInt32(reason.rawValue)), reason.word)
        }
        XCTAssertEqual(M.reason(ModemManagerValue(raw: 10)), "10")
        XCTAssertEqual(M.reason(ModemManagerValue(raw: -3)), "-3")
        XCTAssertEqual(M.reason(ModemManagerValue(raw: .min)), "-2147483648")
        XCTAssertEqual(M.reason(UInt32(10)), "10")
        XCTAssertEqual(M.reason(UInt32.max), "4294967295")
    }

    func testOnlyAcceptedAndTransferredProveAConnection() {
        let proving = ModemManagerCallStateReason.allCases.filter(\.impliesConnected)
        XCTAssertEqual(proving, [.accepted, .transferred])
    }

    // MARK: oFono

    func testOfonoStates() {
        typealias O = OfonoMapping
        XCTAssertEqual(O.phase("incoming"), .live(.incoming, .ringing))
        XCTAssertEqual(O.phase("waiting"), .live(.incoming, .waiting))
        XCTAssertEqual(O.phase("dialing"), .live(.dialing, .dialing))
        XCTAssertEqual(O.phase("alerting"), .live(.dialing, .alerting))
        XCTAssertEqual(O.phase("active"), .live(.connected, .active))
        XCTAssertEqual(O.phase("held"), .live(.connected, .held))
        XCTAssertEqual(O.phase("disconnected"), .ended)
    }

    func testOfonoUnknownStatesKeptVerbatim() {
        typealias O = OfonoMapping
        XCTAssertEqual(O.phase(""), .unknown(""))
        XCTAssertEqual(O.phase("Active"), .unknown("Active"))
        XCTAssertEqual(O.phase("ringing"), .unknown("ringing"))
        XCTAssertEqual(O.phase("hëld\u{0}\n"), .unknown("hëld\u{0}\n"))
        let huge = String(repeating: "x", count: 1 << 20)
        XCTAssertEqual(O.phase(huge), .unknown(huge))
    }

    func testOfonoDisconnectReason() {
        typealias O = OfonoMapping
        XCTAssertEqual(O.disconnectReason("local"), "local")
        XCTAssertEqual(O.disconnectReason("remote"), "remote")
        XCTAssertEqual(O.disconnectReason("network"), "network")
        XCTAssertEqual(O.disconnectReason("cosmic-ray"), "cosmic-ray")
        XCTAssertEqual(O.disconnectReason(""), "")
    }

    // MARK: Call ids

    func testRandomCallIDsAreWellFormedAndDistinct() {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = CallID.random()
            XCTAssertTrue(CallID.isWellFormed(id), id)
            seen.insert(id)
        }
        XCTAssertEqual(seen.count, 1000)
    }

    func testCallIDLayoutFromFixedGenerator() {
        struct Fixed: RandomNumberGenerator {
            var values: [UInt64]
            mutating func next() -> UInt64 { values.isEmpty ? 0 : values.removeFirst() }
        }
        var allOnes = Fixed(values: [.max, .max])
        XCTAssertEqual(CallID.random(using: &allOnes), "ffffffff-ffff-4fff-bfff-ffffffffffff")
        var zeros = Fixed(values: [0, 0])
        XCTAssertEqual(CallID.random(using: &zeros), "00000000-0000-4000-8000-000000000000")
        var mixed = Fixed(values: [0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210])
        XCTAssertEqual(CallID.random(using: &mixed), "01234567-89ab-4def-bedc-ba9876543210")
    }

    func testCallIDWellFormedness() {
        XCTAssertTrue(CallID.isWellFormed("01234567-89ab-4def-bedc-ba9876543210"))
        XCTAssertFalse(CallID.isWellFormed("01234567-89AB-4DEF-BEDC-BA9876543210"))
        XCTAssertFalse(CallID.isWellFormed("01234567-89ab-1def-bedc-ba9876543210"))
        XCTAssertFalse(CallID.isWellFormed("01234567-89ab-4def-cedc-ba9876543210"))
        XCTAssertFalse(CallID.isWellFormed("0123456789ab4defbedcba9876543210"))
        XCTAssertFalse(CallID.isWellFormed(""))
    }
}
