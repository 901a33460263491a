import DBus
import Foundation
import Glibc
import Loop
import Pipeline
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

    /// The fake ModemManager's bare RING with no +CLIP ever: a withheld caller once a number would
    /// have come (CallScreener.withheldAfter), then hung up like any rejected call.
    func testAModemManagerCallThatNeverGetsANumberIsAWithheldCaller() throws {
        try startModemManager()
        try writeRules("withheld reject\n")
        let watch = try startWatch(["--screening", rulesPath])
        let call = try ring("")
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"), watch.log())
        XCTAssertEqual(incoming["number"] as? String, "")
        let screened = try XCTUnwrap(nextEvent(watch, "screened", timeout: CallScreener.withheldAfter + 10), watch.log())
        XCTAssertEqual(screened["call_id"] as? String, incoming["call_id"] as? String)
        XCTAssertEqual(screened["rule"] as? String, "withheld")
        XCTAssertEqual(screened["action"] as? String, "reject")
        let ended = try XCTUnwrap(nextEvent(watch, "disconnected"), watch.log())
        XCTAssertEqual(ended["path"] as? String, call)
        XCTAssertEqual(ended["missed"] as? Bool, false)
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }

    /// A number too long to keep whole (305 bytes, over the 256 telwatch keeps) was still read: it
    /// is shown cut and marked, never as "no number", so it is no withheld caller; no rule can judge
    /// it, so it rings (fail open), and the history keeps it as shown.
    func testANumberTooLongIsCutAndMarkedAndNeverAWithheldCaller() throws {
        try startModemManager()
        try writeRules("withheld reject\nunknown reject\n")
        let watch = try startWatch(["--screening", rulesPath])
        let long = "+1" + String(repeating: "5", count: 303)
        let call = try ring(long)
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"), watch.log())
        let shown = try XCTUnwrap(incoming["number"] as? String)
        XCTAssertEqual(shown, String(long.prefix(253)) + "…", "its first 253 bytes, and the mark")
        XCTAssertTrue(waitForLog(watch, "call \(call): the end of a Number of 305 bytes (its first 253 are kept, marked …)"),
                      watch.log())
        XCTAssertNil(nextEvent(watch, "screened", timeout: CallScreener.withheldAfter + 1.5),
                     "not screened, not as a withheld caller once a number would have come: it rings")
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        let ended = try XCTUnwrap(nextEvent(watch, "disconnected"), watch.log())
        XCTAssertEqual(ended["missed"] as? Bool, true, "it rang, unanswered")
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))

        let log = try runToEnd(["log", "--json", "--state-dir", stateDirectory])
        let row = try XCTUnwrap(log.output.split(separator: "\n").first.flatMap { JSONLine.object(String($0)) }, log.output)
        XCTAssertEqual(row["number"] as? String, shown, "the history keeps the number as shown")
        XCTAssertTrue(row["screened"] is NSNull, "\(row)")
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

    /// The exceptions look back past a restart: a number this phone called before telwatch
    /// started again, and a caller who rang then, are known from the history.
    func testTheExceptionsKnowTheCallsOfTheHistoryAfterARestart() throws {
        try startModemManager()
        try writeRules("unknown reject\nexcept called 30d\nexcept repeat 15m\n")
        let first = try startWatch()
        let dialled = try control("Dial", [.objectPath(try ObjectPath(Self.modem0)), .string("+15550401")])
        let outgoing = try XCTUnwrap(dialled.first?.objectPath?.rawValue)
        XCTAssertNotNil(nextEvent(first, "dialing"))
        let caller = try ring("+15550402")
        XCTAssertNotNil(nextEvent(first, "incoming"))
        try setState(caller, .terminated, reason: .terminated)
        try setState(outgoing, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(first, "run-stopped"), first.log())
        first.signal(SIGTERM)
        XCTAssertEqual(first.wait(timeout: 10), .exited(0))

        let watch = try startWatch(["--screening", rulesPath])
        for (number, rule) in [("+15550401", "called"), ("+15550402", "repeat"), ("+15550403", "unknown")] {
            _ = try ring(number)
            let screened = try XCTUnwrap(nextEvent(watch, "screened"), watch.log())
            XCTAssertEqual(screened["number"] as? String, number)
            XCTAssertEqual(screened["rule"] as? String, rule, "for \(number)")
        }
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
        XCTAssertEqual(watch.log(), "")
    }

    /// `telwatch events` shows the service's `screened` line in text as `watch` does.
    func testEventsShowsTheScreenedLineInText() throws {
        try startModemManager()
        try writeRules("block +1900*\n")
        let watch = try startWatch(["--screening", rulesPath])
        let text = try telwatch(["events", "--verbose", "--bus", fixture.address])
        XCTAssertTrue(waitForLog(text, "following the telwatch service"), text.log())
        _ = try ring("+19005550100")
        XCTAssertNotNil(nextEvent(watch, "screened"), watch.log())
        let line = try XCTUnwrap(text.readLine(timeout: 10) { $0.contains(" screened ") }, text.log())
        XCTAssertTrue(line.contains(" reject ") && line.contains(" in ") && line.contains("+19005550100"), line)
        XCTAssertTrue(line.contains("rule=\"block (\(rulesPath):1)\" hangup=requested"), line)
        text.terminate()
        watch.terminate()
    }

    /// A deflection in the event stream (JSON, and text through `telwatch events`): where to, and
    /// how the stack took it; the fake's `Deflect` sends the call on.
    func testADeflectionSaysWhereToInJSONAndText() throws {
        try startModemManager()
        try writeRules("block deflect +1-555-987-6543 +1900*\n")
        let watch = try startWatch(["--screening", rulesPath])
        let text = try telwatch(["events", "--verbose", "--bus", fixture.address])
        XCTAssertTrue(waitForLog(text, "following the telwatch service"), text.log())
        _ = try ring("+19005550100")
        let screened = try XCTUnwrap(nextEvent(watch, "screened"), watch.log())
        XCTAssertEqual(screened["action"] as? String, "deflect")
        XCTAssertEqual(screened["deflect"] as? String, "requested")
        XCTAssertEqual(screened["deflect_to"] as? String, "+15559876543")
        XCTAssertTrue(screened["hangup"] is NSNull)
        XCTAssertTrue(screened["command"] is NSNull)
        let line = try XCTUnwrap(text.readLine(timeout: 10) { $0.contains(" screened ") }, text.log())
        XCTAssertTrue(line.contains(" deflect ") && line.contains("+19005550100"), line)
        XCTAssertTrue(line.contains("rule=\"block (\(rulesPath):1)\" to=+15559876543 deflect=requested"), line)
        XCTAssertNotNil(nextEvent(watch, "disconnected"), "sent on: " + watch.log())
        text.terminate()
        watch.terminate()
    }

    /// A rejected or ignored call is recorded with what screening did, and is never a missed call:
    /// no `missed` event, not `missed` in the history, not among `log --missed` (docs/screening.md).
    func testAScreenedCallIsRecordedAndNeverMissed() throws {
        try startModemManager()
        try writeRules("block +1900*\nblock ignore +1800*\n")
        let watch = try startWatch(["--screening", rulesPath])
        var seen: [[String: Any]] = []
        _ = try ring("+19005550199")
        let rejected = try XCTUnwrap(nextEvent(watch, "disconnected", seen: &seen), watch.log())
        XCTAssertEqual(rejected["missed"] as? Bool, false)
        let ignored = try ring("+18005550199")
        XCTAssertEqual(nextEvent(watch, "screened", seen: &seen)?["action"] as? String, "ignore")
        try setState(ignored, .terminated, reason: .terminated)  // the caller gives up
        XCTAssertEqual(nextEvent(watch, "disconnected", seen: &seen)?["missed"] as? Bool, false)
        let missed = try ring("+15550123")
        XCTAssertNotNil(nextEvent(watch, "incoming", seen: &seen))
        try setState(missed, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(watch, "missed", seen: &seen), watch.log())
        XCTAssertEqual(seen.filter { $0["event"] as? String == "missed" }.map { $0["number"] as? String }, ["+15550123"])
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))

        func logged(_ arguments: [String]) throws -> [String] {
            let result = try runToEnd(["log", "--json", "--state-dir", stateDirectory] + arguments)
            XCTAssertEqual(result.status, .exited(0), result.errors)
            return try result.output.split(separator: "\n").map { text in
                let row = try XCTUnwrap(JSONLine.object(String(text)))
                return "\(row["number"] as? String ?? "?") screened=\(row["screened"] as? String ?? "null") "
                    + "missed=\(row["missed"] as? Bool ?? true)"
            }
        }
        XCTAssertEqual(try logged([]), ["+15550123 screened=null missed=true", "+18005550199 screened=ignore missed=false",
                                        "+19005550199 screened=reject missed=false"])
        XCTAssertEqual(try logged(["--screened"]), ["+18005550199 screened=ignore missed=false",
                                                    "+19005550199 screened=reject missed=false"])
        XCTAssertEqual(try logged(["--missed"]), ["+15550123 screened=null missed=true"])
        let table = try runToEnd(["log", "--screened", "--state-dir", stateDirectory])
        let lines = table.output.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, table.output)
        XCTAssertTrue(lines.last?.contains(" rejected ") == true && lines.last?.contains(" screened=reject") == true,
                      table.output)
        XCTAssertTrue(lines.dropFirst().first?.contains(" ignored ") == true, table.output)
    }
}
