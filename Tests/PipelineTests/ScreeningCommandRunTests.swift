import BGRunManager
import CallMonitor
import Loop
import Pipeline
import Processes
import TestSupport
import XCTest

/// A `run NAME` rule's command (the gate opener, docs/screening.md) as the hooks' sink runs it:
/// a real child through a real loop, once per call, with no hook configured at all, and the
/// caller's number in its environment byte for byte, however hostile.
final class ScreeningCommandRunTests: XCTestCase {
    private var loop: EventLoop!
    private var scratch: ScratchDirectory!
    private var outcomes: [HookOutcome] = []

    override func setUpWithError() throws {
        loop = try EventLoop()
        scratch = try ScratchDirectory()
        outcomes = []
    }

    override func tearDown() {
        scratch?.remove()
        loop = nil
    }

    func testTheCommandGetsTheNumberVerbatimInItsEnvironmentOnceAndItsOutcomeIsSaid() throws {
        let dump = scratch.path + "/env"
        let gate = scratch.path + "/open-gate"
        try Files.script(gate, "env -0 > \"$1\"; exit 3")
        let hooks = HookRunner(loop: loop, settings: HookSettings(timeout: 10)) { [unowned self] in self.outcomes.append($0) }
        XCTAssertFalse(hooks.mayHaveHooks, "no hook configured")
        let session = StubSession()
        let sink = CallHookSink(hooks: hooks, session: session)
        let hostile = "+1555;$(reboot)\n`id` \"x\""
        let call = CallSnapshot(id: "3f2a1c9e-0000-4000-8000-000000000001",
                                key: CallKey(backend: .modemManager, path: "/c/1"), modem: "/m", direction: .incoming,
                                number: hostile, state: .incoming, detail: .ringing, firstSeen: 1000)
        let command = ScreeningCommand(name: "open-gate", arguments: [gate, dump])
        var screened = ScreenedCall(call: call, decision: ScreeningDecision(action: .reject, rule: .block,
                                                                            source: "/r.conf:2", command: command),
                                    hangup: .requested)
        sink.receive(Delivery(.screened(screened, time: 1000), liveCalls: 1))
        // The stack refused the hang-up: said again, and the command does not run twice.
        screened.hangup = .failed("not authorized")
        sink.receive(Delivery(.screened(screened, time: 1001), liveCalls: 1))

        XCTAssertTrue(loop.run(until: { !self.outcomes.isEmpty && hooks.isIdle }, timeout: 10))
        XCTAssertEqual(outcomes.map(\.command), [[gate, dump]])
        XCTAssertEqual(outcomes.first?.result, .exited(3), "said as a hook's outcome is")
        XCTAssertEqual(outcomes.first?.event, "screened")
        let environment = try XCTUnwrap(Files.environmentDump(dump))
        XCTAssertEqual(environment["TELWATCH_NUMBER"], hostile)
        XCTAssertEqual(environment["TELWATCH_EVENT"], "screened")
        XCTAssertEqual(environment["TELWATCH_SCREENED"], "reject")
        XCTAssertEqual(environment["TELWATCH_SCREENING_COMMAND"], "open-gate")
        XCTAssertEqual(environment["TELWATCH_SCREENING_RULE"], "block (/r.conf:2)")
        XCTAssertEqual(environment["TELWATCH_DEFLECT_TO"], "")
        XCTAssertEqual(environment["TELWATCH_CALL_ID"], call.id)
    }
}
