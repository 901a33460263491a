@testable import telwatch
import Simulator
import XCTest

/// The simulator's script language as a user writes it. Inputs found by fuzz/targets/simulator-script.
final class SimulatorScriptTests: XCTestCase {
    /// A script saved with CRLF line endings (any Windows editor) was read as one long line,
    /// "\r\n" being a single Character in Swift: `ring` failed on "unexpected 'c1'".
    func testAScriptWithCRLFLineEndingsReadsLikeOneWithLF() throws {
        let script = "ring +15551230001\r\nsleep 0.5\r\n# a comment\r\nanswer c1\r\nhangup last\r\n"
        let commands = try SimulatorCommand.parse(script)
        XCTAssertEqual(commands.map(\.line), [1, 2, 4, 5])
        XCTAssertEqual(commands.map(\.command), [.ring(number: "+15551230001", modem: 0), .sleep(0.5),
                                                 .answer(.numbered(1)), .hangup(.last)])
        let lf = try SimulatorCommand.parse(script.replacingOccurrences(of: "\r\n", with: "\n"))
        XCTAssertEqual(lf.map(\.command), commands.map(\.command))
    }

    func testTonesTakeACallAndTheTonesAsTyped() throws {
        let commands = try SimulatorCommand.parse("ring +15551230001\nanswer c1\ntones c1 12*\ntones last 35 # a hash\n")
        XCTAssertEqual(commands.map(\.command).suffix(2), [.tones(call: .numbered(1), dtmf: "12*"), .tones(call: .last, dtmf: "35")])
        XCTAssertThrowsError(try SimulatorCommand.parse("tones c1"))
    }
}
