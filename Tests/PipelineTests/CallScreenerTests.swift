import CallMonitor
import Pipeline
import XCTest

/// `CallScreener` on the tracker's events: once per call when its number is known, never an
/// outgoing call, nothing after an emergency call, a refused hang-up rings (docs/screening.md).
final class CallScreenerTests: XCTestCase {
    private var hangUps: [(CallKey, (String?) -> Void)] = []
    private var failed: [ScreenedCall] = []
    private var deflections: [(CallKey, String, (CallActFailure?) -> Void)] = []

    private func screener(_ text: String) throws -> CallScreener {
        let screener = CallScreener(contacts: nil, localTime: { _ in LocalTime(weekday: 3, minute: 720) },
                                    onHangupFailed: { [unowned self] in self.failed.append($0) },
                                    deflect: { [unowned self] in self.deflections.append(($0, $1, $2)) }) {
            [unowned self] key, done in
            self.hangUps.append((key, done))
        }
        screener.rules = try ScreeningRules.parse(Array(text.utf8), path: "/r.conf") { _ in [] }
        return screener
    }

    private func call(_ id: String, _ direction: CallDirection, _ number: String, state: CallState? = nil,
                      at time: Double = 1000) -> CallSnapshot {
        CallSnapshot(id: id, key: CallKey(backend: .modemManager, path: "/c/\(id)"), modem: "/m", direction: direction,
                     number: number, state: state ?? (direction == .incoming ? .incoming : .dialing),
                     detail: direction == .incoming ? .ringing : .dialing, firstSeen: time)
    }

    func testALateNumberIsScreenedWhenItArrivesAndOnlyOnce() throws {
        let screening = try screener("block +1900*\n")
        XCTAssertTrue(screening.screen([.transition(call("a", .incoming, ""), previous: nil)], now: 1000).isEmpty)
        XCTAssertNil(screening.action(for: "a"), "no number yet: undecided, it may ring")
        let late = screening.screen([.updated(call("a", .incoming, "+19005550100"))], now: 1001)
        XCTAssertEqual(late.map(\.decision.rule), [.block])
        XCTAssertEqual(late.first?.hangup, .requested)
        XCTAssertEqual(hangUps.map(\.0.path), ["/c/a"])
        XCTAssertEqual(screening.action(for: "a"), .reject)
        XCTAssertTrue(screening.screen([.updated(call("a", .incoming, "+19005550101"))], now: 1002).isEmpty,
                      "decided once")
        XCTAssertEqual(hangUps.count, 1)
    }

    func testAnOutgoingCallToABlockedNumberIsUntouched() throws {
        let screening = try screener("block +1900*\n")
        XCTAssertTrue(screening.screen([.transition(call("o", .outgoing, "+19005550100"), previous: nil)], now: 1000).isEmpty)
        XCTAssertTrue(hangUps.isEmpty)
        XCTAssertNil(screening.action(for: "o"))
    }

    func testNothingActsForAnHourAfterAnEmergencyCall() throws {
        let screening = try screener("block +1900*\n")
        _ = screening.screen([.transition(call("e", .outgoing, "112", at: 1000), previous: nil)], now: 1000)
        let back = screening.screen([.transition(call("b", .incoming, "+19005550100", at: 2000), previous: nil)], now: 2000)
        XCTAssertEqual(back.map(\.decision), [ScreeningDecision(action: .allow, rule: .emergency)])
        XCTAssertTrue(hangUps.isEmpty)
        let later = screening.screen([.transition(call("c", .incoming, "+19005550100", at: 4700), previous: nil)], now: 4700)
        XCTAssertEqual(later.first?.action, .reject)
    }

    func testANumberOnlyTheStackListsIsAnEmergencyNumberToo() throws {
        let screening = try screener("block +1900*\n")
        screening.stackListed(["08", "1122"], modem: "ofono /phonesim")
        _ = screening.screen([.transition(call("e", .outgoing, "1122", at: 1000), previous: nil)], now: 1000)
        let back = screening.screen([.transition(call("b", .incoming, "+19005550100", at: 1100), previous: nil)], now: 1100)
        XCTAssertEqual(back.map(\.decision), [ScreeningDecision(action: .allow, rule: .emergency)])
        screening.stackListed([], modem: "ofono /phonesim")
        XCTAssertEqual(screening.stackEmergencyNumbers, [], "a modem's list replaces its earlier one")
    }

    func testARepeatCallerRingsTheSecondTime() throws {
        let screening = try screener("unknown reject\nexcept repeat 15m\n")
        let first = screening.screen([.transition(call("1", .incoming, "+15550100", at: 1000), previous: nil)], now: 1000)
        XCTAssertEqual(first.first?.action, .reject)
        let second = screening.screen([.transition(call("2", .incoming, "0015550100", at: 1600), previous: nil)], now: 1600)
        XCTAssertEqual(second.first?.decision, ScreeningDecision(action: .allow, rule: .repeatCaller))
    }

    func testARefusedHangUpRingsAfterAll() throws {
        let screening = try screener("withheld reject\n")
        _ = screening.screen([.transition(call("w", .incoming, "withheld"), previous: nil)], now: 1000)
        XCTAssertEqual(screening.action(for: "w"), .reject)
        hangUps.first?.1("org.freedesktop.ModemManager1.Error.Core.Unauthorized: not authorized")
        XCTAssertEqual(screening.action(for: "w"), .allow)
        XCTAssertEqual(failed.first?.hangup?.failure, "org.freedesktop.ModemManager1.Error.Core.Unauthorized: not authorized")
        XCTAssertEqual(failed.first?.decision.action, .reject, "what the rule said is kept")
    }

    /// The end of a call as the tracker gives it when nobody answered: `missed`, and the `missed` event.
    private func unanswered(_ snapshot: CallSnapshot) -> [TrackerEvent] {
        var ended = snapshot
        ended.state = .disconnected
        ended.missed = true
        return [.transition(ended, previous: .incoming), .missed(ended)]
    }

    private func missedFlags(_ events: [TrackerEvent]) -> [String] {
        events.map { event in
            switch event {
            case .transition(let call, _): return "\(call.id) ended missed=\(call.missed)"
            case .missed(let call): return "\(call.id) missed"
            default: return "other"
            }
        }
    }

    func testARejectedOrIgnoredCallIsNoMissedCallASilencedOneIs() throws {
        let screening = try screener("block +1900*\nblock ignore +1800*\nblock silence +1700*\n")
        let calls = [call("r", .incoming, "+19005550100"), call("i", .incoming, "+18005550100"),
                     call("s", .incoming, "+17005550100"), call("n", .incoming, "+15550100")]
        _ = screening.screen(calls.map { .transition($0, previous: nil) }, now: 1000)
        let ends = calls.flatMap(unanswered)
        XCTAssertEqual(missedFlags(screening.unmissed(ends)), [
            "r ended missed=false", "i ended missed=false",
            "s ended missed=true", "s missed", "n ended missed=true", "n missed",
        ])
        screening.delivered(ends)
        XCTAssertEqual(missedFlags(screening.unmissed(unanswered(calls[0]))), ["r ended missed=true", "r missed"],
                       "forgotten once the end was delivered")
    }

    func testARejectWhoseHangUpFailedRangAndIsMissed() throws {
        let screening = try screener("block +1900*\n")
        let blocked = call("f", .incoming, "+19005550100")
        _ = screening.screen([.transition(blocked, previous: nil)], now: 1000)
        hangUps.first?.1("not authorized")
        XCTAssertEqual(missedFlags(screening.unmissed(unanswered(blocked))), ["f ended missed=true", "f missed"])
    }

    private func mmCall(_ id: String, _ number: String, at time: Double = 1000) -> CallSnapshot {
        call(id, .incoming, number, at: time)
    }

    func testAModemManagerCallRingingWithoutANumberIsAWithheldCallerOnceACLIPWouldHaveCome() throws {
        let screening = try screener("withheld reject\n")
        XCTAssertTrue(screening.screen([.transition(mmCall("w", ""), previous: nil)], now: 1000).isEmpty)
        XCTAssertEqual(screening.withheldDeadline, 1000 + CallScreener.withheldAfter)
        XCTAssertTrue(screening.screenNumberless(now: 1000 + CallScreener.withheldAfter - 0.5).isEmpty, "not yet")
        XCTAssertNil(screening.action(for: "w"))
        let made = screening.screenNumberless(now: 1000 + CallScreener.withheldAfter)
        XCTAssertEqual(made.map(\.decision.rule), [.withheld])
        XCTAssertEqual(made.first?.action, .reject)
        XCTAssertEqual(made.first?.call.number, "", "the call's own number is kept as the stack gave it")
        XCTAssertEqual(hangUps.map(\.0.path), ["/c/w"])
        XCTAssertNil(screening.withheldDeadline, "nothing left to wait for: no timer")
        XCTAssertTrue(screening.screenNumberless(now: 2000).isEmpty, "decided once")
    }

    func testANumberCutForItsLengthIsNoWithheldCallerAndRings() throws {
        let screening = try screener("withheld reject\nunknown reject\n")
        let cut = String(repeating: "5", count: 253) + CallText.cutMark
        XCTAssertTrue(CallText.isCut(cut))
        XCTAssertFalse(CallText.isCut("+1555…"), "a short number with the mark is no cut one")
        XCTAssertTrue(screening.screen([.transition(mmCall("long", cut), previous: nil)], now: 1000).isEmpty,
                      "no rule can judge it: fail open")
        XCTAssertNil(screening.withheldDeadline, "it has a number: no wait for one")
        XCTAssertTrue(screening.screenNumberless(now: 2000).isEmpty)
        XCTAssertTrue(hangUps.isEmpty)
        XCTAssertEqual(screening.screen([.transition(mmCall("other", "+15550100"), previous: nil)], now: 1001)
            .map(\.decision.rule), [.unknown], "the rules still judge the others")
    }

    func testANumberThatComesOrAnEndBeforeTheDeadlineIsNoWithheldCaller() throws {
        let screening = try screener("withheld reject\n")
        _ = screening.screen([.transition(mmCall("late", ""), previous: nil), .transition(mmCall("gone", ""), previous: nil)],
                             now: 1000)
        XCTAssertTrue(screening.screen([.updated(mmCall("late", "+15550100"))], now: 1002).isEmpty, "a number no rule names")
        var ended = mmCall("gone", "")
        ended.state = .disconnected
        _ = screening.screen([.transition(ended, previous: .incoming)], now: 1003)
        XCTAssertNil(screening.withheldDeadline)
        XCTAssertTrue(screening.screenNumberless(now: 2000).isEmpty)
        XCTAssertTrue(hangUps.isEmpty)

        // oFono names a withheld caller itself when the +CLIP comes with the call; a call it found
        // by its CLCC poll first keeps "" (docs/screening.md): then the same wait as ModemManager's.
        let ofono = CallSnapshot(id: "o", key: CallKey(backend: .ofono, path: "/phonesim/voicecall01"), modem: "/phonesim",
                                 direction: .incoming, number: "", state: .incoming, detail: .ringing, firstSeen: 3000)
        _ = screening.screen([.transition(ofono, previous: nil)], now: 3000)
        XCTAssertEqual(screening.withheldDeadline, 3000 + CallScreener.withheldAfter)
        XCTAssertEqual(screening.screenNumberless(now: 3000 + CallScreener.withheldAfter).map(\.decision.rule), [.withheld])
    }

    func testNoRulesScreenNothing() throws {
        let screening = try screener("block +1900*\n")
        screening.rules = nil
        XCTAssertTrue(screening.screen([.transition(call("x", .incoming, "+19005550100"), previous: nil)], now: 1000).isEmpty)
        XCTAssertTrue(hangUps.isEmpty)
    }

    /// A deflection the stack refuses (a modem without call deflection): the call is rejected
    /// instead, and said so; a refused hang-up after that rings. Neither is a missed call until
    /// it rings.
    func testARefusedDeflectionIsRejectedInstead() throws {
        let screening = try screener("block deflect +15559876543 +1900*\n")
        let blocked = call("d", .incoming, "+19005550100")
        let decided = screening.screen([.transition(blocked, previous: nil)], now: 1000)
        XCTAssertEqual(decided.map(\.action), [.deflect])
        XCTAssertEqual(decided.first?.deflection, .requested)
        XCTAssertNil(decided.first?.hangup)
        XCTAssertEqual(deflections.map(\.1), ["+15559876543"])
        XCTAssertEqual(deflections.first?.0, blocked.key)
        XCTAssertTrue(hangUps.isEmpty, "deflected, not hung up")
        XCTAssertEqual(missedFlags(screening.unmissed(unanswered(blocked))), ["d ended missed=false"])

        deflections.first?.2(.stackRefused(name: "org.freedesktop.ModemManager1.Error.Core.Unsupported", message: "no CTFR"))
        XCTAssertEqual(screening.action(for: "d"), .reject)
        XCTAssertEqual(failed.map(\.action), [.reject])
        XCTAssertEqual(failed.first?.decision.action, .deflect, "what the rule said is kept")
        XCTAssertEqual(failed.first?.failure, "org.freedesktop.ModemManager1.Error.Core.Unsupported: no CTFR")
        XCTAssertEqual(failed.first?.hangup, .requested)
        XCTAssertEqual(failed.first?.failureText, "the stack did not deflect call d (block (/r.conf:1)) to +15559876543: "
                       + "org.freedesktop.ModemManager1.Error.Core.Unsupported: no CTFR; it is rejected")
        XCTAssertEqual(hangUps.map(\.0), [blocked.key], "rejected instead")
        XCTAssertEqual(missedFlags(screening.unmissed(unanswered(blocked))), ["d ended missed=false"])

        hangUps.first?.1("not authorized")
        XCTAssertEqual(failed.map(\.action), [.reject, .allow])
        XCTAssertEqual(missedFlags(screening.unmissed(unanswered(blocked))), ["d ended missed=true", "d missed"])
    }

    /// A `run NAME` rule's decision carries the command; the call is hung up as any reject.
    func testARunRuleRejectsAndCarriesItsCommand() throws {
        let screening = try screener("command gate /usr/local/bin/open-gate\nblock run gate +15550001\n")
        let decided = screening.screen([.transition(call("g", .incoming, "+15550001"), previous: nil)], now: 1000)
        XCTAssertEqual(decided.first?.action, .reject)
        XCTAssertEqual(decided.first?.decision.command,
                       ScreeningCommand(name: "gate", arguments: ["/usr/local/bin/open-gate"]))
        XCTAssertEqual(hangUps.count, 1)
        XCTAssertTrue(deflections.isEmpty)
    }

    /// ModemManager ends its call object when the modem refuses the deflection, and the modem's
    /// next RING is a new object: that one, from the same caller on the same modem, is rejected.
    func testARefusedDeflectionWhoseCallEndedRejectsTheCallersNextRing() throws {
        let screening = try screener("block deflect +15559876543 +1900*\n")
        var lost: [ScreenedCall] = []
        screening.onDeflectionLost = { lost.append($0) }
        let first = call("d1", .incoming, "+19005550100", at: 1000)
        _ = screening.screen([.transition(first, previous: nil)], now: 1000)
        let ends = unanswered(first)
        screening.delivered(screening.unmissed(ends))
        deflections.first?.2(.stackRefused(name: "org.freedesktop.ModemManager1.Error.MobileEquipment.NotSupported",
                                           message: "Operation not supported"))
        XCTAssertTrue(failed.isEmpty, "its call has ended: nothing more is said of it")
        XCTAssertEqual(lost.first?.failureText, "the stack did not deflect call d1 (block (/r.conf:1)) to +15559876543: "
                       + "org.freedesktop.ModemManager1.Error.MobileEquipment.NotSupported: Operation not supported; "
                       + "it is rejected when it rings again")

        let again = screening.screen([.transition(call("d2", .incoming, "+19005550100", at: 1003), previous: nil)],
                                     now: 1003)
        XCTAssertEqual(again.map(\.action), [.reject])
        XCTAssertEqual(again.first?.decision.action, .deflect)
        XCTAssertEqual(again.first?.deflection?.failure,
                       "org.freedesktop.ModemManager1.Error.MobileEquipment.NotSupported: Operation not supported")
        XCTAssertEqual(hangUps.map(\.0.path), ["/c/d2"])
        XCTAssertEqual(deflections.count, 1, "not deflected again")

        let later = screening.screen([.transition(call("d3", .incoming, "+19005550100", at: 1100), previous: nil)],
                                     now: 1100)
        XCTAssertEqual(later.map(\.action), [.deflect], "a new call: deflected as the rule says")
    }
}
