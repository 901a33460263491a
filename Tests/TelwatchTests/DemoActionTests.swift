import TestSupport
import XCTest

/// `telwatch demo --feedback --call-audio --notify`: the phone session's stand-ins on the demo's
/// bus say what telwatch asked of them, in the order a phone would see it.
final class DemoActionTests: CommandTestCase {
    func testTheDemoShowsTheRingTheCallAudioAndTheMissedCallNotification() throws {
        let result = try runToEnd(["demo", "--feedback", "--call-audio", "--notify", "--speed", "20"], timeout: 60)
        XCTAssertEqual(result.status, .exited(0), result.errors)
        XCTAssertEqual(result.errors, "")
        // What the stand-ins said, and the call events, in order.
        let said = result.output.split(separator: "\n").compactMap { line -> String? in
            if let mark = line.range(of: " ▸ ") { return String(line[mark.upperBound...]) }
            let words = line.split(separator: " ")
            return words.count > 1 && ["incoming", "connected", "missed"].contains(words[1]) ? String(words[1]) : nil
        }
        // On `connected` the ring ends and the call audio goes on; the ring's end waits for
        // feedbackd's answer to the ring when the call was answered before it came (a loaded
        // machine), so the two come in either order.
        let answered: Set = ["feedbackd: feedback 1 ends", "callaudiod: call audio mode"]
        XCTAssertEqual(Array(said.prefix(3)), ["incoming", "feedbackd: phone-incoming-call sounds (feedback 1)", "connected"],
                       result.output)
        XCTAssertEqual(Set(said.dropFirst(3).prefix(2)), answered, result.output)
        XCTAssertEqual(said.dropFirst(5).first, "incoming", result.output)
        XCTAssertTrue(said.contains("feedbackd: phone-call-waiting sounds (feedback 2)"), result.output)
        XCTAssertTrue(said.contains { $0.hasPrefix("notification 1: Missed call: +15551230003 at ") }, result.output)
        XCTAssertEqual(said.filter { $0 == "callaudiod: call audio mode" }.count, 3, "once per run with a call answered")
        XCTAssertEqual(said.filter { $0 == "callaudiod: default audio mode" }.count, 3)
        // Withdrawn when the missed caller's next call is answered, the story's last call, beside
        // that call's ring ending and its call audio going on.
        let lastConnected = try XCTUnwrap(said.lastIndex(of: "connected"), result.output)
        let afterIt = said[(lastConnected + 1)...].prefix(3)
        XCTAssertTrue(afterIt.contains("notification 1 withdrawn"), result.output)
        XCTAssertTrue(afterIt.contains("callaudiod: call audio mode"), result.output)
        XCTAssertTrue(afterIt.contains { $0.hasPrefix("feedbackd: feedback ") && $0.hasSuffix(" ends") }, result.output)
    }
}
