import Foundation
import Glibc
import TestSupport
import XCTest

/// `watch` tells which modem a call is on by identity, in its JSON lines and to hooks, as the
/// fake ModemManager's modem 0 describes itself.
final class ModemIdentityCommandTests: CommandTestCase {
    func testTheModemsIdentityIsInTheJSONAndTheHookEnvironment() throws {
        try startModemManager()
        let (hooks, reader) = try recordingHook("incoming",
                                                printing: "$TELWATCH_MODEM_ID|$TELWATCH_MODEM_NUMBER|$TELWATCH_OPERATOR")
        defer { close(reader) }
        let watch = try startWatch(["--hooks", hooks])
        let redacted = try startWatch(["--redact-numbers", "--inhibit", "none", "--state-dir", stateDirectory + "2",
                                       "--no-api"])
        _ = try ring("+15550004")

        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"))
        XCTAssertEqual(incoming["modem_id"] as? String, "356938000000000")
        XCTAssertEqual(incoming["modem_number"] as? String, "+15550100000")
        XCTAssertEqual(incoming["operator"] as? String, "Telwatch Mobile")
        XCTAssertEqual(LineReader(fd: reader).next(timeout: 10), .line("356938000000000|+15550100000|Telwatch Mobile"))

        let hidden = try XCTUnwrap(nextEvent(redacted, "incoming"))
        XCTAssertEqual(hidden["modem_number"] as? String, "**********00")
        XCTAssertEqual(hidden["modem_id"] as? String, "356938000000000")
    }
}
