import DBus
import Foundation
import TestSupport
import XCTest

/// Encoding and decoding without a bus: round trips, wrong shapes, and random bodies.
final class CodecTests: XCTestCase {
    static var basicMakers: [(inout SplitMix) -> DBusValue] { [
        { .byte(UInt8.random(in: .min ... .max, using: &$0)) },
        { .bool(Bool.random(using: &$0)) },
        { .int16(Int16.random(in: .min ... .max, using: &$0)) },
        { .uint16(UInt16.random(in: .min ... .max, using: &$0)) },
        { .int32(Int32.random(in: .min ... .max, using: &$0)) },
        { .uint32(UInt32.random(in: .min ... .max, using: &$0)) },
        { .int64(Int64.random(in: .min ... .max, using: &$0)) },
        { .uint64(UInt64.random(in: .min ... .max, using: &$0)) },
        { .double(Double.random(in: -1e9 ... 1e9, using: &$0)) },
        { rng in
            let scalars = (0..<Int.random(in: 0...12, using: &rng)).map { _ in
                Character(Unicode.Scalar(UInt32.random(in: 0x20...0x2FF, using: &rng)) ?? "x")
            }
            return .string(String(scalars))
        },
        { .objectPath(try! ObjectPath("/org/example/N\(Int.random(in: 0...999, using: &$0))")) },
        { _ in .signature("a{sv}") },
    ] }

    static func randomValue(_ rng: inout SplitMix, depth: Int = 0) -> DBusValue {
        let choice = depth >= 4 ? 0 : Int.random(in: 0...5, using: &rng)
        switch choice {
        case 1:
            let element = basicMakers.randomElement(using: &rng)!(&rng)
            let count = Int.random(in: 0...4, using: &rng)
            var items: [DBusValue] = []
            for _ in 0..<count {
                var candidate = randomValue(&rng, depth: depth + 1)
                while candidate.signature != element.signature { candidate = basicMakers.randomElement(using: &rng)!(&rng) }
                items.append(candidate)
            }
            return .array(elementSignature: element.signature, items)
        case 2:
            let entries = (0..<Int.random(in: 0...4, using: &rng)).map { index in
                DBusValue.DictEntry(.string("k\(index)"), .variant(randomValue(&rng, depth: depth + 1)))
            }
            return .dictionary(keySignature: "s", valueSignature: "v", entries)
        case 3:
            return .structure((0..<Int.random(in: 1...4, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        case 4:
            return .variant(randomValue(&rng, depth: depth + 1))
        default:
            return basicMakers.randomElement(using: &rng)!(&rng)
        }
    }

    func testRandomBodiesRoundTripThroughTheWireFormat() throws {
        var rng = SplitMix(seed: 0x7E1)
        for _ in 0..<1000 {
            let values = (0..<Int.random(in: 1...5, using: &rng)).map { _ in Self.randomValue(&rng) }
            let message = try Message.signal(path: "/org/example", interface: "org.example.Fuzz", member: "Body")
            try message.append(values: values)
            let decoded = try Message(marshalled: message.marshal()).values()
            XCTAssertEqual(decoded, values)
        }
    }

    func testMutatedAndRandomBytesNeverCrashTheDecoder() throws {
        var rng = SplitMix(seed: 0xBAD)
        var accepted = 0
        for round in 0..<1000 {
            let values = (0..<Int.random(in: 1...4, using: &rng)).map { _ in Self.randomValue(&rng) }
            let message = try Message.signal(path: "/org/freedesktop/ModemManager1/Call/1",
                                             interface: "org.freedesktop.ModemManager1.Call", member: "StateChanged")
            try message.append(values: values)
            var bytes = message.marshal()
            if round % 10 == 0 {
                bytes = (0..<Int.random(in: 1...256, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                for _ in 0..<Int.random(in: 1...6, using: &rng) {
                    bytes[Int.random(in: 16..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            guard let parsed = try? Message(marshalled: bytes) else { continue }
            accepted += 1
            _ = try? parsed.values()
            _ = try? parsed.decode(Int32.self, Int32.self, UInt32.self)
            _ = try? parsed.decode(String.self, PropertyMap.self, [String].self)
            _ = try? parsed.decode([ObjectPath].self)
            var reader = parsed.reader()
            while !reader.isAtEnd, (try? reader.readValue()) != nil {}
        }
        XCTAssertGreaterThan(accepted, 0, "some mutations still parse, so the decoder really ran on them")
    }

    func testWrongShapesAreThrownNotTrapped() throws {
        let message = try Message.signal(path: "/p", interface: "org.example.X", member: "Y")
        try message.append("org.ofono.VoiceCall", ["State": "incoming"])  // oa{ss}-like: a{ss} where a{sv} is expected
        XCTAssertThrowsError(try message.decode(String.self, PropertyMap.self)) { error in
            XCTAssertEqual(error as? DBusError, .signatureMismatch(expected: "sa{sv}", actual: "sa{ss}"))
        }
        var reader = message.reader()
        _ = try reader.read(String.self)
        XCTAssertThrowsError(try reader.read([String: Variant].self)) { error in
            XCTAssertEqual(error as? DBusError, .typeMismatch(expected: "a{sv}", actual: "a{ss}"))
        }
        // Read in place, a property whose value is no variant is said the same way.
        var inPlace = message.reader()
        XCTAssertThrowsError(try inPlace.readProperties { _, _ in }) { error in
            XCTAssertEqual(error as? DBusError, .typeMismatch(expected: "a{sv}", actual: "s"))
        }
        _ = try inPlace.read(String.self)
        XCTAssertThrowsError(try inPlace.readProperties { _, _ in XCTFail("a value that is no variant was read") }) {
            XCTAssertEqual($0 as? DBusError, .typeMismatch(expected: "v", actual: "s"))
        }
        let empty = try Message.signal(path: "/p", interface: "org.example.X", member: "Y")
        XCTAssertThrowsError(try empty.decode(Int32.self))
        var emptyReader = empty.reader()
        XCTAssertThrowsError(try emptyReader.readValue())
        XCTAssertThrowsError(try Message(marshalled: []))
    }

    /// The dbus-messages fuzz target starts from these seeds: one libdbus rejects (a serial of 0,
    /// a header counting descriptors the bytes cannot carry) never reaches a handler.
    func testEveryDBusFuzzSeedIsAMessageLibdbusAccepts() throws {
        let directory = Repository.path("fuzz/corpus/dbus-messages")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        XCTAssertGreaterThanOrEqual(seeds.count, 17)
        for seed in seeds {
            let bytes = try XCTUnwrap(FileManager.default.contents(atPath: directory + "/" + seed), seed)
            let message = try? Message(marshalled: Array(bytes))
            XCTAssertNotNil(message, "libdbus rejects the seed \(seed)")
            XCTAssertTrue(message?.type == .signal || message?.type == .methodReturn, seed)
        }
    }

    func testInvalidNamesAreRejectedBeforeLibdbusSeesThem() {
        // Runtime strings (a literal would take the compile-time path instead).
        for bad in ["not/a/path", "/trailing/", "", "/a//b", "/caf\u{E9}"] {
            XCTAssertThrowsError(try ObjectPath(String(bad)), bad)
        }
        XCTAssertThrowsError(try Message.signal(path: "/ok", interface: "no-dots", member: "M"))
        XCTAssertThrowsError(try Message.signal(path: "/ok", interface: "a.b", member: "bad member"))
        XCTAssertThrowsError(try Message.methodCall(destination: "bad..name", path: "/ok", interface: nil, member: "M"))
        XCTAssertThrowsError(try Signature(String("a{")))
    }

    func testVariantAccessorsConvertTypedValues() throws {
        let value = DBusValue.variant(.array(elementSignature: "o", [.objectPath("/a"), .objectPath("/b")]))
        XCTAssertEqual(value.as([ObjectPath].self), ["/a", "/b"])
        XCTAssertNil(value.as([String].self))
        XCTAssertNil(value.int32)
        let map = PropertyMap(dbusValue: ["State": Variant(.int32(4))].dbusValue)
        XCTAssertEqual(map?["State"]?.value.int32, 4)
    }
}
