import XCTest
@testable import CallMonitor

final class StateMappingTests: XCTestCase {
    // MARK: ModemManager

    func testModemManagerKnownStates() {
        typealias M = ModemManagerMapping
        for direction: Int32 in [0, 1, 2, 99] {
            XCTAssertEqual(M.phase(state: 1, direction: direction), .live(.dialing, .dialing))
            XCTAssertEqual(M.phase(state: 2, direction: direction), .live(.dialing, .alerting))
            XCTAssertEqual(M.phase(state: 3, direction: direction), .live(.incoming, .ringing))
            XCTAssertEqual(M.phase(state: 4, direction: direction), .live(.connected, .active))
            XCTAssertEqual(M.phase(state: 5, direction: direction), .live(.connected, .held))
            XCTAssertEqual(M.phase(state: 7, direction: direction), .ended)
        }
    }

    func testModemManagerWaitingDependsOnDirection() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.phase(state: 6, direction: 1), .live(.incoming, .waiting))
        XCTAssertEqual(M.phase(state: 6, direction: 2), .live(.dialing, .alerting))
        XCTAssertEqual(M.phase(state: 6, direction: 0), .live(.incoming, .waiting))
        XCTAssertEqual(M.phase(state: 6, direction: -5), .live(.incoming, .waiting))
        XCTAssertEqual(M.phase(state: 6, direction: .max), .live(.incoming, .waiting))
    }

    func testModemManagerUnknownStateIsDialingOnlyWhenOutgoing() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.phase(state: 0, direction: 2), .live(.dialing, .dialing))
        XCTAssertEqual(M.phase(state: 0, direction: 1), .unknown("0"))
        XCTAssertEqual(M.phase(state: 0, direction: 0), .unknown("0"))
        XCTAssertEqual(M.phase(state: 0, direction: 42), .unknown("0"))
    }

    func testModemManagerOutOfRangeStatesAreUnknownVerbatim() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.phase(state: 8, direction: 1), .unknown("8"))
        XCTAssertEqual(M.phase(state: -1, direction: 2), .unknown("-1"))
        XCTAssertEqual(M.phase(state: .max, direction: 0), .unknown("2147483647"))
        XCTAssertEqual(M.phase(state: .min, direction: 0), .unknown("-2147483648"))
    }

    func testModemManagerDirection() {
        typealias M = ModemManagerMapping
        XCTAssertEqual(M.direction(0), .unknown)
        XCTAssertEqual(M.direction(1), .incoming)
        XCTAssertEqual(M.direction(2), .outgoing)
        XCTAssertEqual(M.direction(3), .unknown)
        XCTAssertEqual(M.direction(-1), .unknown)
        XCTAssertEqual(M.direction(.min), .unknown)
    }

    func testModemManagerReasons() {
        typealias M = ModemManagerMapping
        let expected = ["unknown", "outgoing-started", "incoming-new", "accepted", "terminated",
                        "refused-or-busy", "error", "audio-setup-failed", "transferred", "deflected"]
        for (raw, name) in expected.enumerated() {
            XCTAssertEqual(M.reason(Int32(raw)), name)
            XCTAssertEqual(M.reason(UInt32(raw)), name)
        }
        XCTAssertEqual(M.reason(Int32(10)), "10")
        XCTAssertEqual(M.reason(Int32(-3)), "-3")
        XCTAssertEqual(M.reason(Int32.min), "-2147483648")
        XCTAssertEqual(M.reason(UInt32(10)), "10")
        XCTAssertEqual(M.reason(UInt32.max), "4294967295")
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
