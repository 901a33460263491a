import XCTest
@testable import CallMonitor

/// An act whose stack goes away, or whose monitor stops, is still answered, once.
final class ActsInFlightTests: XCTestCase {
    func testAStackThatGoesAwayAnswersItsActsOnce() {
        let acts = ActsInFlight()
        var answers: [String] = []
        let onModemManager = acts.begin(on: .modemManager, gone: "gone") { answers.append("mm " + $0) }
        let onOfono = acts.begin(on: .ofono, gone: "gone") { answers.append("ofono " + $0) }
        acts.stackGone(.modemManager)
        onModemManager("done")
        XCTAssertEqual(answers, ["mm gone"], "a late answer after the stack went is not told")
        onOfono("done")
        onOfono("again")
        XCTAssertEqual(answers, ["mm gone", "ofono done"])
        XCTAssertEqual(acts.count, 0)

        let last = acts.begin(on: .ofono, gone: "gone") { answers.append("last " + $0) }
        acts.stackGone(nil)
        last("done")
        XCTAssertEqual(answers.last, "last gone")
    }
}
