import DBus
import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// `--screening` against the fake ModemManager: the decision, its event, the hang-up through the
/// stack, failing open, and a rules file read again (docs/screening.md).
final class ScreeningCommandTests: CommandTestCase {
    private var rulesPath: String { logind.directory + "/screening.conf" }

    private func writeRules(_ text: String) throws {
        // Replaced by a rename, as editors and `telwatch block` do.
        try text.write(toFile: rulesPath + ".new", atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(rulesPath + ".new", rulesPath), 0)
    }

    private func waitForLog(_ process: TestProcess, _ text: String, timeout: Double = 10) -> Bool {
        let deadline = monotonicNow() + timeout
        while monotonicNow() < deadline {
            if process.log().contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    func testABlockedNumberIsHungUpAtTheStackAndTheEventSaysSo() throws {
        try startModemManager()
        try writeRules("block +1900* # spam\nallow +19005550100\n")
        let watch = try startWatch(["--screening", rulesPath])
        let call = try ring("+1 900 555 0199")
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"))
        let screened = try XCTUnwrap(nextEvent(watch, "screened"), watch.log())
        XCTAssertEqual(screened["call_id"] as? String, incoming["call_id"] as? String)
        XCTAssertEqual(screened["action"] as? String, "reject")
        XCTAssertEqual(screened["rule"] as? String, "block")
        XCTAssertEqual(screened["source"] as? String, rulesPath + ":1")
        XCTAssertEqual(screened["hangup"] as? String, "requested")
        // The fake's Call.Hangup ends the call: the stack hung it up, not the caller.
        let ended = try XCTUnwrap(nextEvent(watch, "disconnected"), watch.log())
        XCTAssertEqual(ended["path"] as? String, call)
        XCTAssertEqual(ended["call_id"] as? String, incoming["call_id"] as? String)

        _ = try ring("+19005550100")
        let allowed = try XCTUnwrap(nextEvent(watch, "screened"))
        XCTAssertEqual(allowed["action"] as? String, "allow")
        XCTAssertEqual(allowed["rule"] as? String, "allow")
        XCTAssertTrue(allowed["hangup"] is NSNull)
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    func testATextLineNamesTheRuleAndEscapesTheNumber() throws {
        try startModemManager()
        try writeRules("unknown silence\n")
        let watch = try telwatch(["--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory,
                                  "--screening", rulesPath])
        XCTAssertNotNil(watch.readLine(timeout: 15) { $0.contains("synced") }, watch.log())
        _ = try ring("+1555\u{1B}[2J")
        let line = try XCTUnwrap(watch.readLine(timeout: 10) { $0.contains("screened") }, watch.log())
        XCTAssertTrue(line.contains(" silence "), line)
        XCTAssertTrue(line.contains("+1555\\e[2J"), line)
        XCTAssertTrue(line.contains("rule=\"unknown (\(rulesPath):1)\""), line)
        XCTAssertFalse(line.contains("\u{1B}"), line)
        watch.signal(SIGINT)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    func testABrokenRulesFileScreensNothingAndSaysWhereOnce() throws {
        try startModemManager()
        try writeRules("block +1900*\nblock-list spam.txt\n")
        try "+1555\n+1\u{7}666\n".write(toFile: logind.directory + "/spam.txt", atomically: true, encoding: .utf8)
        let watch = try startWatch(["--screening", rulesPath])
        XCTAssertTrue(waitForLog(watch, "screening is off"), watch.log())
        let lines = watch.log().split(separator: "\n").filter { $0.contains("screening") }
        XCTAssertEqual(lines.count, 1, watch.log())
        XCTAssertTrue(lines.first?.contains(logind.directory + "/spam.txt:2: a control character (0x7)") == true,
                      watch.log())
        _ = try ring("+19005550199")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertNil(nextEvent(watch, "screened", timeout: 1), "fail open: nothing is screened")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    func testRulesAreReadAgainWhenTheFileChangesAndOnSIGHUP() throws {
        try startModemManager()
        try writeRules("# nothing yet\n")
        let watch = try startWatch(["--screening", rulesPath])
        _ = try ring("+15550101")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertNil(nextEvent(watch, "screened", timeout: 1))

        try writeRules("block ignore +15550102\n")
        // The watch has read it by the time SIGHUP's line says the configuration was reloaded.
        watch.signal(SIGHUP)
        XCTAssertTrue(waitForLog(watch, "reloaded the configuration"), watch.log())
        _ = try ring("+15550102")
        let screened = try XCTUnwrap(nextEvent(watch, "screened"), watch.log())
        XCTAssertEqual(screened["action"] as? String, "ignore")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }
}
