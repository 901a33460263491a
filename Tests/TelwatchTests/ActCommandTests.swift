import CallMonitor
import DBus
import XCTest
@testable import telwatch

/// What the act commands make of their operands, which call they mean, and what they say of
/// each refusal of the service: without a service, so every case is cheap to state.
final class ActCommandTests: XCTestCase {
    private static let ringingID = "407e08ae-5e72-42ed-887b-626b4cd58182"
    private static let waitingID = "40aa0001-0000-4000-8000-000000000001"
    private static let activeID = "9b1c3f20-1111-4222-8333-444455556666"
    private static let heldID = "c0ffee00-1111-4222-8333-444455556666"

    private func call(_ id: String, _ state: CallState, _ detail: CallDetail?, number: String = "+15551234") -> RemoteCall {
        let snapshot = CallSnapshot(id: id, key: CallKey(backend: .modemManager, path: "/c/\(id.prefix(4))"), modem: "",
                                    direction: .incoming, number: number, state: state, detail: detail, firstSeen: 1)
        return RemoteCall(path: (try? ObjectPath("/io/telwatch/Monitor1/Call/" + id.filter { $0 != "-" })) ?? "/", call: snapshot)
    }

    private var ringing: RemoteCall { call(Self.ringingID, .incoming, .ringing) }
    private var waiting: RemoteCall { call(Self.waitingID, .incoming, .waiting) }
    private var active: RemoteCall { call(Self.activeID, .connected, .active) }
    private var held: RemoteCall { call(Self.heldID, .connected, .held) }

    // MARK: Operands

    func testOperandsAreTheCallThenTheNumberAndTheCallMayBeLeftOut() throws {
        XCTAssertEqual(try ActCommand.split(.answer, []), .init(call: nil, act: .answer))
        XCTAssertEqual(try ActCommand.split(.hangup, ["407e08ae"]), .init(call: "407e08ae", act: .hangUp))
        XCTAssertEqual(try ActCommand.split(.deflect, ["+15559876"]), .init(call: nil, act: .deflect(to: "+15559876")))
        XCTAssertEqual(try ActCommand.split(.deflect, ["407e", "+15559876"]), .init(call: "407e", act: .deflect(to: "+15559876")))
        XCTAssertEqual(try ActCommand.split(.tones, ["1#9"]), .init(call: nil, act: .tones("1#9")))
        XCTAssertEqual(try ActCommand.split(.tones, ["9b1c", "*5"]), .init(call: "9b1c", act: .tones("*5")))
    }

    func testTooManyOrTooFewOperandsAreBadUsage() {
        for (command, given) in [(TelwatchCommand.answer, ["a", "b"]), (.hangup, ["a", "b"]), (.deflect, []),
                                 (.deflect, ["a", "b", "c"]), (.tones, []), (.tones, ["a", "b", "c"])] {
            XCTAssertThrowsError(try ActCommand.split(command, given), "\(command) \(given)") { error in
                XCTAssertTrue("\(error)".contains("see telwatch \(command.rawValue) --help"), "\(error)")
            }
        }
    }

    // MARK: Which call

    func testLeftOutTheCallIsTheOneThatRingsAndForTonesTheOneActive() throws {
        let calls = [active, ringing, held]
        XCTAssertEqual(try CallChoice.choose(nil, among: calls, default: .ringing).get().call.id, Self.ringingID)
        XCTAssertEqual(try CallChoice.choose(nil, among: calls, default: .active).get().call.id, Self.activeID)
        XCTAssertEqual(try CallChoice.choose(nil, among: [active, waiting], default: .ringing).get().call.id, Self.waitingID,
                       "a waiting call rings too")
    }

    func testNoRingingCallSaysSoWithTheLiveCallsAndExitsNoSuchCall() {
        let failure = CallChoice.choose(nil, among: [active], default: .ringing).failure
        XCTAssertEqual(failure, .none(.ringing, live: ["9b1c3f20 connected"]))
        XCTAssertEqual(failure?.status, .noSuchCall)
        XCTAssertEqual(failure?.message("answer"),
                       "answer: no call rings (live: 9b1c3f20 connected); name one: telwatch answer CALL")
        XCTAssertEqual(CallChoice.choose(nil, among: [], default: .ringing).failure?.message("hangup"),
                       "hangup: no call rings (no call is live); name one: telwatch hangup CALL")
        XCTAssertEqual(CallChoice.choose(nil, among: [ringing, held], default: .active).failure?.message("tones"),
                       "tones: no call is active (live: 407e08ae incoming, c0ffee00 connected); name one: telwatch tones CALL")
    }

    func testTwoRingingCallsAreAmbiguousAndNamed() {
        let failure = CallChoice.choose(nil, among: [ringing, active, waiting], default: .ringing).failure
        XCTAssertEqual(failure?.status, .ambiguousCall)
        XCTAssertEqual(failure?.message("answer"),
                       "answer: 2 calls ring (407e08ae, 40aa0001); name one: telwatch answer CALL")
    }

    func testACallIsNamedByItsIdOrItsStartWithOrWithoutDashesInAnyCase() throws {
        let calls = [ringing, waiting, active]
        for named in [Self.activeID, "9b1c3f20", "9B1C", "9b1c3f2011114222", String(Self.activeID.filter { $0 != "-" })] {
            XCTAssertEqual(try CallChoice.choose(named, among: calls, default: .ringing).get().call.id, Self.activeID, named)
        }
    }

    func testAStartThatFitsSeveralCallsOrNoneIsRefusedWithTheIds() {
        let calls = [ringing, waiting, active]
        let several = CallChoice.choose("40", among: calls, default: .ringing).failure
        XCTAssertEqual(several?.status, .ambiguousCall)
        XCTAssertEqual(several?.message("hangup"), "hangup: '40' starts the ids of 2 live calls "
                       + "(\(Self.ringingID), \(Self.waitingID)): give more of the id")
        let none = CallChoice.choose("ffff", among: calls, default: .ringing).failure
        XCTAssertEqual(none?.status, .noSuchCall)
        XCTAssertEqual(none?.message("hangup"), "hangup: no live call has the id 'ffff' (live: 407e08ae, 40aa0001, 9b1c3f20)")
        XCTAssertEqual(CallChoice.choose("-", among: calls, default: .ringing).failure?.status, .noSuchCall,
                       "nothing of an id is no call, not every call")
    }

    // MARK: The service's refusals

    private func failure(_ name: String, _ message: String = "why") -> ActFailure {
        ActFailure(DBusError.remote(name: name, message: message), command: "deflect", bus: .system)
    }

    func testEachTypedErrorOfTheAPIHasItsExitStatus() {
        let expected: [ActFailure.APIError: ExitStatus] = [
            .noSuchCall: .noSuchCall, .noSuchModem: .noSuchCall, .modemAmbiguous: .ambiguousCall,
            .notRinging: .notRinging, .notPermitted: .notPermitted, .refusedNumber: .refusedNumber,
            .emergencyNumber: .refusedNumber, .stackRefused: .stackFailed, .stackTimedOut: .stackFailed,
            .stackGone: .stackFailed, .stackAnsweredOddly: .stackFailed,
        ]
        XCTAssertEqual(Set(expected.keys), Set(ActFailure.APIError.allCases))
        for (error, status) in expected {
            XCTAssertEqual(failure("io.telwatch.Monitor1.Error." + error.rawValue).status, status, error.rawValue)
            XCTAssertEqual(failure("io.telwatch.Call1.Error." + error.rawValue).status, status, error.rawValue)
        }
        XCTAssertEqual(Set(expected.values.map(\.code)).count, 6, "six kinds of refusal, six statuses")
        XCTAssertEqual(Set(ExitStatus.allCases.map(\.code)).count, ExitStatus.allCases.count, "each status its own code")
    }

    func testTheStacksWordsFollowTheHeadlineAsTheyCame() {
        let refused = failure("io.telwatch.Monitor1.Error.StackRefused", "org.ofono.Error.Failed: Operation failed")
        XCTAssertEqual(refused.message, "deflect: the stack refused: org.ofono.Error.Failed: Operation failed")
        XCTAssertEqual(failure("io.telwatch.Monitor1.Error.EmergencyNumber", "").message,
                       "deflect: refused: an emergency number is never dialled from afar")
    }

    func testOtherErrorsAreTheBusOrTheService() {
        XCTAssertEqual(failure("org.freedesktop.DBus.Error.AccessDenied").status, .notPermitted)
        XCTAssertEqual(failure("org.freedesktop.DBus.Error.ServiceUnknown").status, .busUnavailable)
        XCTAssertEqual(failure(DBusError.noReplyName).status, .busUnavailable)
        XCTAssertEqual(failure("org.freedesktop.DBus.Error.UnknownObject").status, .noSuchCall, "the call ended meanwhile")
        XCTAssertEqual(failure("org.freedesktop.DBus.Error.UnknownMethod").status, .failure, "an older service")
        XCTAssertEqual(failure("io.telwatch.Monitor1.Error.SomethingNew").status, .failure)
        XCTAssertEqual(failure("org.example.Error.StackGone").status, .failure, "only telwatch's own errors are typed")
        XCTAssertEqual(ActFailure(DBusError.disconnected, command: "dial", bus: .system).status, .busUnavailable)
    }

    func testADialledCallsPathGivesItsId() {
        XCTAssertEqual(ServiceActs.callID(of: "/io/telwatch/Monitor1/Call/407e08ae5e7242ed887b626b4cd58182"),
                       Self.ringingID)
        XCTAssertEqual(ServiceActs.callID(of: "/io/telwatch/Monitor1/Call/x"),
                       "/io/telwatch/Monitor1/Call/x")
    }

    func testEveryExitStatusIsInTheManual() {
        for status in ExitStatus.allCases {
            XCTAssertFalse(ManualFacts.meaning(status).isEmpty)
            XCTAssertTrue([" ", "\n"].contains { ActCommand.exitStatuses.contains($0 + "\(status.code) ") }
                          || status == .problemsFound
                          || status == .apiNameTaken, "act --help lists \(status.code)")
        }
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
