import DBus
import TestSupport
import XCTest

/// `WireSignal` writes the bytes libdbus itself would: the same message, byte for byte, for every
/// kind of entry it has, in random orders and with random strings.
final class WireSignalTests: XCTestCase {
    func testAWireSignalIsByteForByteWhatLibdbusMarshals() throws {
        var rng = SplitMix(seed: 15)
        for round in 0..<200 {
            var wire = WireSignal(path: "/io/telwatch/Monitor1", interface: "io.telwatch.Monitor1", member: "Event",
                                  signature: "sa{sv}")
            let name = randomText(&rng)
            wire.string(name)
            let mark = wire.beginVardict()
            var entries: [DBusValue.DictEntry] = []
            for _ in 0..<Int.random(in: 0...24, using: &rng) {
                switch Int.random(in: 0...8, using: &rng) {
                case 0:
                    let text = randomText(&rng)
                    wire.entry("text", string: text)
                    entries.append(.init(.string("text"), .variant(.string(text))))
                case 1:
                    let flag = Bool.random(using: &rng)
                    wire.entry("flag", bool: flag)
                    entries.append(.init(.string("flag"), .variant(.bool(flag))))
                case 2:
                    let count = Int64.random(in: .min ... .max, using: &rng)
                    wire.entry("count", int64: count)
                    entries.append(.init(.string("count"), .variant(.int64(count))))
                case 3:
                    let time = UInt64.random(in: .min ... .max, using: &rng)
                    wire.entry("time", uint64: time)
                    entries.append(.init(.string("time"), .variant(.uint64(time))))
                case 4:
                    let seconds = Double.random(in: -1e9 ... 1e9, using: &rng)
                    wire.entry("seconds", double: seconds)
                    entries.append(.init(.string("seconds"), .variant(.double(seconds))))
                case 5:
                    let value = DBusValue.uint32(UInt32.random(in: .min ... .max, using: &rng))
                    wire.entry("Property", value)
                    entries.append(.init(.string("Property"), .variant(value)))
                default:
                    let element: Signature = ["s", "t", "d", "x", "b"][Int.random(in: 0...4, using: &rng)]
                    wire.entry("null", emptyArrayOf: UInt8(ascii: Unicode.Scalar(element.rawValue.utf8.first!)))
                    entries.append(.init(.string("null"), .variant(.array(elementSignature: element, []))))
                }
            }
            wire.endVardict(mark)
            let message = try XCTUnwrap(wire.message(), "round \(round): libdbus refused the bytes")

            let reference = try Message.signal(path: "/io/telwatch/Monitor1", interface: "io.telwatch.Monitor1",
                                               member: "Event")
            try reference.append(values: [.string(name), .dictionary(keySignature: "s", valueSignature: "v", entries)])
            let (ours, theirs) = (message.marshal(), reference.marshal())
            XCTAssertTrue(ours == theirs, "round \(round): the bytes differ from byte "
                          + "\(Array(zip(ours, theirs)).firstIndex { $0 != $1 } ?? min(ours.count, theirs.count))")
            XCTAssertEqual(try message.values(), try reference.values(), "round \(round)")
        }
    }

    func testAStringWithANULIsRefusedWhole() {
        var wire = WireSignal(path: "/a", interface: "a.b", member: "C", signature: "s")
        wire.string("before\u{0}after")
        XCTAssertNil(wire.message())
    }

    private func randomText(_ rng: inout SplitMix) -> String {
        String((0..<Int.random(in: 0...20, using: &rng)).map { _ in
            Character(Unicode.Scalar(UInt32.random(in: 0x20...0x2FF, using: &rng)) ?? "x")
        })
    }
}
