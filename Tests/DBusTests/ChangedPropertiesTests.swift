import DBus
import TestSupport
import XCTest

/// `ChangedProperties` reads a `PropertiesChanged` from the message's bytes: whatever it reads is
/// what libdbus's iterators read, and what it does not read it leaves to them whole.
final class ChangedPropertiesTests: XCTestCase {
    private static let interface = "org.freedesktop.ModemManager1.Call"

    private static func signal(_ interface: String, _ entries: [(String, DBusValue)]) throws -> Message {
        let message = try Message.signal(path: "/org/freedesktop/ModemManager1/Call/3",
                                         interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        let map = DBusValue.dictionary(keySignature: "s", valueSignature: "v",
                                       entries.map { DBusValue.DictEntry(.string($0.0), .variant($0.1)) })
        try message.append(values: [.string(interface), map, .array(elementSignature: "s", [.string("Gone")])])
        return message
    }

    /// What the iterators read of the same body.
    private static func iterated(_ message: Message) throws -> [(String, DBusValue)] {
        var reader = try XCTUnwrap(message.reader(checked: "sa{sv}as"))
        _ = try reader.read(String.self)
        var seen: [(String, DBusValue)] = []
        try reader.readProperties(last: true) { name, value in seen.append((name, try value.readValue())) }
        return seen
    }

    private static func readHere(_ message: Message, _ interface: StaticString = "org.freedesktop.ModemManager1.Call")
        -> (ChangedProperties.Outcome, [(String, DBusValue)]) {
        var seen: [(String, DBusValue)] = []
        let outcome = ChangedProperties.read(message, interface: interface) { seen.append(($0, $1)) }
        return (outcome, seen)
    }

    private static func isBasic(_ value: DBusValue) -> Bool {
        switch value {
        case .byte, .bool, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath: return true
        default: return false
        }
    }

    func testAStateChangeIsReadAsTheIteratorsReadIt() throws {
        let message = try Self.signal(Self.interface, [("State", .int32(4)), ("StateReason", .int32(3))])
        let (outcome, seen) = Self.readHere(message)
        XCTAssertEqual(outcome, .read)
        XCTAssertEqual(seen.map(\.0), ["State", "StateReason"])
        XCTAssertEqual(seen.map(\.1), [.int32(4), .int32(3)])
    }

    func testAnotherInterfaceIsToldAndNothingVisited() throws {
        let message = try Self.signal("org.freedesktop.ModemManager1.Modem", [("State", .int32(8))])
        let (outcome, seen) = Self.readHere(message)
        XCTAssertEqual(outcome, .otherInterface)
        XCTAssertTrue(seen.isEmpty)
        // A prefix of the interface asked for is another interface too.
        let longer = try Self.signal(Self.interface + "X", [("State", .int32(8))])
        XCTAssertEqual(Self.readHere(longer).0, .otherInterface)
    }

    func testAContainerValueLeavesTheWholeBodyToTheIterators() throws {
        let audio = DBusValue.dictionary(keySignature: "s", valueSignature: "v",
                                         [DBusValue.DictEntry(.string("encoding"), .variant(.string("pcm")))])
        let message = try Self.signal(Self.interface, [("State", .int32(4)), ("AudioFormat", audio)])
        let (outcome, seen) = Self.readHere(message)
        XCTAssertEqual(outcome, .unreadable)
        XCTAssertTrue(seen.isEmpty, "nothing is visited before the body is left to the iterators")
    }

    func testAnEmptyChangeIsReadAsEmpty() throws {
        let (outcome, seen) = Self.readHere(try Self.signal(Self.interface, []))
        XCTAssertEqual(outcome, .read)
        XCTAssertTrue(seen.isEmpty)
    }

    /// Random bodies of every basic type and some containers, each in every alignment the names'
    /// lengths give: what is read here equals what the iterators read, and only bodies with a value
    /// of another type are left to them.
    func testRandomBodiesAreReadAsTheIteratorsReadThem() throws {
        var rng = SplitMix(seed: 0xC4A)
        var readHere = 0
        for _ in 0..<2000 {
            let entries = (0..<Int.random(in: 0...5, using: &rng)).map { index in
                (String(repeating: "N", count: Int.random(in: 0...9, using: &rng)) + "\(index)",
                 CodecTests.randomValue(&rng, depth: Int.random(in: 2...4, using: &rng)))
            }
            let message = try Message(marshalled: try Self.signal(Self.interface, entries).marshal())
            let (outcome, seen) = Self.readHere(message)
            let expected = try Self.iterated(message)
            if entries.allSatisfy({ Self.isBasic($0.1) }) {
                XCTAssertEqual(outcome, .read, "\(entries)")
                XCTAssertEqual(seen.map(\.0), expected.map(\.0))
                XCTAssertEqual(seen.map(\.1), expected.map(\.1))
                readHere += 1
            } else {
                XCTAssertEqual(outcome, .unreadable, "\(entries)")
                XCTAssertTrue(seen.isEmpty)
            }
        }
        XCTAssertGreaterThan(readHere, 200, "most bodies hold basic values only")
    }
}
