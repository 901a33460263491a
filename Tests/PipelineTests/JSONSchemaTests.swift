import CallMonitor
import Loop
import Pipeline
import TestSupport
import XCTest
@testable import BGRunManager

/// Every event kind's JSON line, held to the schema docs/user-guide.md documents ("JSON lines"):
/// the exact keys in their order and each value's JSON type. A key added, dropped, renamed or
/// retyped fails here. The switches over event kinds have no `default`, so a new kind does not
/// build until its line is written down here (and in docs/user-guide.md).
final class JSONSchemaTests: XCTestCase {
    /// 2026-11-29T14:20:45.402Z, as in docs/user-guide.md's example.
    private let now = 1_795_962_045.402
    private let callID = "8758f479-318c-412c-8eef-94e245ed8d9f"
    private let schema = EventSchema()
    /// The modem of docs/user-guide.md's example.
    private let identity = ModemIdentity(equipmentID: "356938035643809", ownNumber: "+15551230000",
                                         operatorName: "Example Mobile")

    // MARK: Helpers

    /// A line's keys in order, each with its value's JSON type: `string`, `time` (an RFC 3339 UTC
    /// string with milliseconds), `int` (no fraction written), `number`, `bool` or `null`.
    private func shape(_ line: String, file: StaticString = #filePath, at number: UInt = #line) -> [String] {
        guard let value = try? JSONValue.parse(line), case .object(let members) = value else {
            XCTFail("not one JSON object: \(line)", file: file, line: number)
            return []
        }
        XCTAssertNotNil(JSONLine.object(line), "Foundation reads it too: \(line)", file: file, line: number)
        return members.map { member in
            let type: String
            switch member.value {
            case .null: type = "null"
            case .bool: type = "bool"
            case .number: type = member.value.integer != nil ? "int" : "number"
            case .string(let text): type = Self.isRFC3339Milliseconds(text) ? "time" : "string"
            case .array: type = "array"
            case .object: type = "object"
            }
            return member.key + ":" + type
        }
    }

    /// `2026-11-29T14:20:45.402Z`: four-digit year, UTC, exactly three fraction digits.
    static func isRFC3339Milliseconds(_ text: String) -> Bool {
        let pattern = Array("dddd-dd-ddTdd:dd:dd.dddZ")
        let characters = Array(text)
        guard characters.count == pattern.count else { return false }
        return zip(characters, pattern).allSatisfy { character, expected in
            expected == "d" ? character.isASCII && character.isNumber : character == expected
        }
    }

    private func write(_ event: TrackerEvent, liveCalls: Int = 1, schema: EventSchema? = nil) -> String? {
        var object = JSONObject()
        return (schema ?? self.schema).write(event, time: now, liveCalls: liveCalls, contact: nil, into: &object) ? object.line : nil
    }

    private func write(_ event: RunEvent, liveCalls: Int = 1) -> String? {
        var object = JSONObject()
        return schema.write(event, liveCalls: liveCalls, into: &object) ? object.line : nil
    }

    private func write(_ event: SleepEvent, liveCalls: Int = 0) -> String? {
        var object = JSONObject()
        return schema.write(event, liveCalls: liveCalls, into: &object) ? object.line : nil
    }

    private func write(_ notice: BackendNotice) -> String? {
        var object = JSONObject()
        return schema.write(notice, time: now, into: &object) ? object.line : nil
    }

    private func value(_ line: String?, _ key: String) -> JSONValue? {
        line.flatMap { try? JSONValue.parse($0)[key] }
    }

    private func call(state: CallState = .incoming, detail: CallDetail? = .ringing,
                      direction: CallDirection = .incoming, number: String = "+15551230001",
                      reason: String? = "incoming-new", connectedAt: Double? = nil, endedAt: Double? = nil,
                      missed: Bool = false, resumed: Bool = false, firstSeen: Double? = nil,
                      identity: ModemIdentity? = nil) -> CallSnapshot {
        CallSnapshot(id: callID, key: mmKey(0), modem: ModemPath(mmModem), modemIdentity: identity ?? self.identity,
                     direction: direction, number: number, name: "",
                     state: state, detail: detail, reason: reason.map(CallEndReason.init(word:)), resumed: resumed, firstSeen: firstSeen ?? now,
                     connectedAt: connectedAt, endedAt: endedAt, missed: missed)
    }

    // MARK: Call events

    /// The documented keys of every call event, in order; the types that differ between events are
    /// given, the defaults being those of a call at first sight.
    private static func callShape(previous: String = "null", detail: String = "string", contact: String = "null",
                                  modemIdentity: String = "string", connectedAt: String = "null",
                                  endedAt: String = "null", duration: String = "null") -> [String] {
        [
            "event:string", "time:time", "call_id:string", "backend:string", "modem:string",
            "modem_id:" + modemIdentity, "modem_number:" + modemIdentity, "operator:" + modemIdentity, "path:string",
            "state:string", "previous:" + previous, "detail:" + detail, "direction:string", "number:string",
            "name:string", "contact:" + contact, "reason:string", "multiparty:bool", "initial:bool", "resumed:bool", "missed:bool",
            "first_seen:time", "connected_at:" + connectedAt, "ended_at:" + endedAt, "duration:" + duration,
            "live_calls:int",
        ]
    }

    func testTheReadmesIncomingLineIsWhatTelwatchWrites() {
        XCTAssertEqual(write(.transition(call(), previous: nil)), """
        {"event":"incoming","time":"2026-11-29T14:20:45.402Z","call_id":"8758f479-318c-412c-8eef-94e245ed8d9f",\
        "backend":"modemmanager","modem":"/org/freedesktop/ModemManager1/Modem/0","modem_id":"356938035643809",\
        "modem_number":"+15551230000","operator":"Example Mobile",\
        "path":"/org/freedesktop/ModemManager1/Call/0","state":"incoming","previous":null,"detail":"ringing",\
        "direction":"incoming","number":"+15551230001","name":"","contact":null,"reason":"incoming-new","multiparty":false,\
        "initial":false,"resumed":false,"missed":false,"first_seen":"2026-11-29T14:20:45.402Z","connected_at":null,\
        "ended_at":null,"duration":null,"live_calls":1}
        """)
    }

    func testIncomingAndDialingAtFirstSight() throws {
        let incoming = try XCTUnwrap(write(.transition(call(), previous: nil)))
        XCTAssertEqual(shape(incoming), Self.callShape())
        let dialing = try XCTUnwrap(write(.transition(call(state: .dialing, detail: .dialing, direction: .outgoing,
                                                           reason: "outgoing-started"), previous: nil)))
        XCTAssertEqual(shape(dialing), Self.callShape())
        XCTAssertEqual(value(dialing, "event"), .string("dialing"))
        XCTAssertEqual(value(dialing, "direction"), .string("outgoing"))
    }

    func testConnectedHasItsPreviousStateAndWhenItConnected() throws {
        let line = try XCTUnwrap(write(.transition(call(state: .connected, detail: .active, reason: "accepted",
                                                        connectedAt: now), previous: .incoming)))
        XCTAssertEqual(shape(line), Self.callShape(previous: "string", connectedAt: "time"))
        XCTAssertEqual(value(line, "event"), .string("connected"))
        XCTAssertEqual(value(line, "previous"), .string("incoming"))
    }

    func testDisconnectedHasNoDetailAndADuration() throws {
        let line = try XCTUnwrap(write(.transition(call(state: .disconnected, detail: nil, reason: "terminated",
                                                        connectedAt: now - 10, endedAt: now, firstSeen: now - 12),
                                                   previous: .connected), liveCalls: 0))
        XCTAssertEqual(shape(line), Self.callShape(previous: "string", detail: "null", connectedAt: "time",
                                                   endedAt: "time", duration: "number"))
        XCTAssertEqual(value(line, "duration"), .number("10.000"))
        XCTAssertEqual(value(line, "live_calls"), .number("0"))
    }

    func testMissedFollowsTheDisconnectedOfACallNeverAnswered() throws {
        let ended = call(state: .disconnected, detail: nil, reason: "terminated", endedAt: now, missed: true,
                         firstSeen: now - 2)
        let line = try XCTUnwrap(write(.missed(ended), liveCalls: 0))
        XCTAssertEqual(shape(line), Self.callShape(previous: "string", detail: "null", endedAt: "time",
                                                   duration: "number"))
        XCTAssertEqual(value(line, "event"), .string("missed"))
        XCTAssertEqual(value(line, "state"), .string("disconnected"))
        XCTAssertEqual(value(line, "previous"), .string("disconnected"), "the state did not change")
        XCTAssertEqual(value(line, "missed"), .bool(true))
        XCTAssertEqual(value(line, "duration"), .number("2.000"))
    }

    func testUpdatedKeepsTheStateAsItsPrevious() throws {
        let line = try XCTUnwrap(write(.updated(call(number: "+15551230003"))))
        XCTAssertEqual(shape(line), Self.callShape(previous: "string"))
        XCTAssertEqual(value(line, "event"), .string("updated"))
        XCTAssertEqual(value(line, "previous"), .string("incoming"))
        XCTAssertEqual(value(line, "number"), .string("+15551230003"))
    }

    func testACallThatCameAndWentWhileAsleepHasNoDuration() throws {
        let unseen = call(state: .disconnected, detail: nil, reason: "terminated", endedAt: now, missed: true,
                          resumed: true)
        let line = try XCTUnwrap(write(.transition(unseen, previous: nil), liveCalls: 0))
        XCTAssertEqual(shape(line), Self.callShape(detail: "null", endedAt: "time"))
        XCTAssertEqual(value(line, "resumed"), .bool(true))
        XCTAssertEqual(value(line, "previous"), .null)
        XCTAssertEqual(value(line, "duration"), .null, "how long it rang is not known")
    }

    func testTheBusyAndIdleEdgesWriteNoLine() {
        var object = JSONObject()
        XCTAssertFalse(schema.write(.busy(call()), time: now, liveCalls: 1, contact: nil, into: &object))
        XCTAssertFalse(schema.write(.idle(call()), time: now, liveCalls: 0, contact: nil, into: &object))
        XCTAssertEqual(object.line, "{}", "nothing was written")
    }

    func testRedactionKeepsTheLastTwoDigitsAndTheLength() {
        let redacting = EventSchema(redactNumbers: true)
        let cases = [("+15551230001", "**********01"), ("withheld", "withheld"), ("", ""), ("12", "12"),
                     ("123", "*23"), ("'; rm -rf ~ #\u{1B}", "************#\u{1B}")]
        for (number, shown) in cases {
            XCTAssertEqual(value(write(.transition(call(number: number), previous: nil), schema: redacting), "number"),
                           .string(shown), number.debugDescription)
        }
        XCTAssertEqual(value(write(.transition(call(), previous: nil)), "number"), .string("+15551230001"),
                       "without --redact-numbers the number is as it came")
    }

    func testAModemTheStackDoesNotDescribeIsNull() throws {
        let line = try XCTUnwrap(write(.transition(call(identity: .unknown), previous: nil)))
        XCTAssertEqual(shape(line), Self.callShape(modemIdentity: "null"))
        let serialOnly = try XCTUnwrap(write(.transition(call(identity: ModemIdentity(equipmentID: "1")), previous: nil)))
        XCTAssertEqual([value(serialOnly, "modem_id"), value(serialOnly, "modem_number"), value(serialOnly, "operator")],
                       [.string("1"), .null, .null])
    }

    func testRedactionHidesTheModemsOwnNumberToo() {
        let line = write(.transition(call(), previous: nil), schema: EventSchema(redactNumbers: true))
        XCTAssertEqual(value(line, "modem_number"), .string("**********00"))
        XCTAssertEqual(value(line, "modem_id"), .string("356938035643809"), "an IMEI is not a phone number")
    }

    func testAHostileOperatorNameIsKeptExactInJSON() {
        let hostile = "'; rm -rf ~ #\u{1B}[31m\n\"x\""
        let line = write(.transition(call(identity: ModemIdentity(operatorName: hostile)), previous: nil))
        XCTAssertEqual(value(line, "operator"), .string(hostile))
    }

    func testAHostileCallerIDIsKeptExactInJSON() {
        let hostile = "'; rm -rf ~ #\u{1B}[31m\n\"x\"\u{202E}\u{7}"
        XCTAssertEqual(value(write(.transition(call(number: hostile), previous: nil)), "number"), .string(hostile))
    }

    // MARK: Run events

    /// Each run event's line: its name and its keys with their types.
    private static func expected(_ kind: RunEvent.Kind) -> (name: String, shape: [String]) {
        let head = ["event:string", "time:time"]
        let tail = ["live_calls:int"]
        switch kind {
        case .started: return ("run-started", head + ["run_id:string", "reason:string", "holder:string"] + tail)
        case .stopped: return ("run-stopped", head + ["run_id:string", "reason:string", "duration:number"] + tail)
        case .expired: return ("run-expired", head + ["run_id:string", "duration:number"] + tail)
        case .lockTaken: return ("lock-taken", head + ["what:string", "mode:string"] + tail)
        case .lockRetaken: return ("lock-retaken", head + ["what:string", "mode:string"] + tail)
        case .lockUnavailable: return ("lock-unavailable", head + ["message:string"] + tail)
        case .wakelockTaken: return ("wakelock-taken", head + ["name:string"] + tail)
        case .wakelockUnavailable: return ("wakelock-unavailable", head + ["message:string"] + tail)
        case .wakelockReleaseFailed: return ("wakelock-release-failed", head + ["message:string"] + tail)
        case .timerUnavailable: return ("timer-unavailable", head + ["message:string"] + tail)
        case .heartbeat: return ("heartbeat", head + ["run_id:string", "count:int", "elapsed:number"] + tail)
        case .runCommandStarted: return ("run-command-started", head + ["pid:int"] + tail)
        case .runCommandExited: return ("run-command-exited", head + ["pid:int", "status:string", "early:bool"] + tail)
        case .runCommandFailed: return ("run-command-failed", head + ["message:string"] + tail)
        case .staleRunRecovered:
            return ("stale-run-recovered", head + ["run_id:string", "reason:string", "pid:int", "started_at:time"] + tail)
        case .staleCommandStopped: return ("stale-command-stopped", head + ["pid:int"] + tail)
        case .stateError: return ("state-error", head + ["message:string"] + tail)
        }
    }

    private var run: RunInfo {
        RunInfo(id: "bf4706abcde25667", reason: "incoming", firstHolder: callID, startedAt: now - 7)
    }

    private var everyRunEvent: [RunEvent.Kind] {
        let record = RunRecord(runID: "0123456789abcdef", reason: "dialing", pid: 4242, startedAt: now - 3600.25,
                               updatedAt: now - 60, holders: 1, lease: 14_400, leaseExpiresAt: now + 600,
                               lock: .held, wakelock: nil)
        return [
            .started(run), .stopped(run, reason: .idle, duration: 7), .expired(run, duration: 14_400),
            .lockTaken(InhibitorRequest()), .lockRetaken(InhibitorRequest(what: "sleep:idle", mode: "delay")),
            .lockUnavailable("no logind"), .wakelockTaken(KernelWakelock(name: "telwatch")),
            .wakelockUnavailable("no /sys/power/wake_lock"), .wakelockReleaseFailed("EPERM"),
            .timerUnavailable("timerfd_create: EMFILE"), .heartbeat(runID: run.id, count: 3, elapsed: 180),
            .runCommandStarted(pid: 31337), .runCommandExited(pid: 31337, status: .exited(1), early: true),
            .runCommandFailed("cannot start pw-play: ENOENT"), .staleRunRecovered(record),
            .staleCommandStopped(pid: 31338), .stateError("read-only file system"),
        ]
    }

    func testEveryRunEventHasItsDocumentedKeysAndTypes() throws {
        var names: Set<String> = []
        for kind in everyRunEvent {
            let (name, expected) = Self.expected(kind)
            let line = try XCTUnwrap(write(RunEvent(time: now, kind: kind)), name)
            XCTAssertEqual(shape(line), expected, line)
            XCTAssertEqual(value(line, "event"), .string(name))
            names.insert(name)
        }
        XCTAssertEqual(names.count, 17, "one sample of every kind")
    }

    func testTheReadmesRunLinesAreWhatTelwatchWrites() {
        XCTAssertEqual(write(RunEvent(time: now, kind: .started(run))), """
        {"event":"run-started","time":"2026-11-29T14:20:45.402Z","run_id":"bf4706abcde25667","reason":"incoming",\
        "holder":"8758f479-318c-412c-8eef-94e245ed8d9f","live_calls":1}
        """)
        XCTAssertEqual(write(RunEvent(time: now + 0.001, kind: .lockTaken(InhibitorRequest()))), """
        {"event":"lock-taken","time":"2026-11-29T14:20:45.403Z","what":"sleep","mode":"block","live_calls":1}
        """)
    }

    func testRunEventValuesKeepTheirTypes() throws {
        let exited = write(RunEvent(time: now, kind: .runCommandExited(pid: 31337, status: .signaled(9), early: false)))
        XCTAssertEqual(value(exited, "early"), .bool(false))
        XCTAssertEqual(value(exited, "pid")?.integer, 31337)
        XCTAssertEqual(value(exited, "status"), .string("killed by signal 9"))
        let beat = write(RunEvent(time: now, kind: .heartbeat(runID: "r", count: 12, elapsed: 90.5)))
        XCTAssertEqual(value(beat, "count")?.integer, 12)
        XCTAssertEqual(value(beat, "elapsed"), .number("90.500"))
        let record = RunRecord(runID: "r", reason: "incoming", pid: 7, startedAt: now - 0.25, updatedAt: now,
                               holders: 1, lease: nil, leaseExpiresAt: nil, lock: .pending, wakelock: nil)
        let stale = write(RunEvent(time: now, kind: .staleRunRecovered(record)))
        XCTAssertEqual(value(stale, "started_at"), .string("2026-11-29T14:20:45.152Z"))
        XCTAssertEqual(value(stale, "pid")?.integer, 7)
        let stopped = write(RunEvent(time: now, kind: .stopped(run, reason: .stale, duration: 0)), liveCalls: 0)
        XCTAssertEqual(value(stopped, "reason"), .string("stale"))
        XCTAssertEqual(value(stopped, "duration"), .number("0.000"))
    }

    func testARecoveredRunFromACorruptRecordStillWritesATime() {
        let record = RunRecord(runID: "r", reason: "incoming", pid: 7, startedAt: -1.5, updatedAt: 0, holders: 1,
                               lease: nil, leaseExpiresAt: nil, lock: .held, wakelock: nil)
        let stale = write(RunEvent(time: now, kind: .staleRunRecovered(record)))
        XCTAssertEqual(value(stale, "started_at"), .string("1969-12-31T23:59:58.500Z"))
    }

    // MARK: Sleep events

    /// Each sleep event's line; nil for the ones that are warnings on stderr only.
    private static func expected(_ kind: SleepEvent.Kind) -> (name: String, shape: [String])? {
        let head = ["event:string", "time:time"]
        let tail = ["live_calls:int"]
        switch kind {
        case .sleep(let runID, _):
            return ("sleep", head + ["run_id:" + (runID == nil ? "null" : "string"), "holders:int"] + tail)
        case .resume(let asleepFor):
            return ("resume", head + ["asleep_for:" + (asleepFor == nil ? "null" : "number")] + tail)
        case .overridden:
            return ("sleep-overridden", head + ["run_id:string", "lock:string", "inhibit:string", "holders:int"] + tail)
        case .lockTaken(let role, _, let seconds):
            return ("\(role.rawValue)-lock-taken",
                    head + ["what:string", "mode:string", "seconds:" + (seconds == nil ? "null" : "number")] + tail)
        case .lockReleased(let role, _): return ("\(role.rawValue)-lock-released", head + ["expired:bool"] + tail)
        case .lockUnavailable(let role, _): return ("\(role.rawValue)-lock-unavailable", head + ["message:string"] + tail)
        case .stateError: return ("state-error", head + ["message:string"] + tail)
        case .signalIgnored, .malformedSignal: return nil
        }
    }

    private var everySleepEvent: [SleepEvent.Kind] {
        [
            .sleep(runID: "bf4706abcde25667", holders: 1), .sleep(runID: nil, holders: 0),
            .resume(asleepFor: 3600.5), .resume(asleepFor: nil),
            .overridden(runID: "bf4706abcde25667", lock: .held, inhibit: "sleep:block", holders: 2),
            .lockTaken(.delay, InhibitorRequest(mode: "delay"), seconds: nil),
            .lockTaken(.grace, InhibitorRequest(), seconds: 10),
            .lockReleased(.delay, expired: false), .lockReleased(.grace, expired: true),
            .lockUnavailable(.delay, "no logind"), .lockUnavailable(.grace, "refused"),
            .stateError("disk full"),
            .signalIgnored(sender: ":1.99", suppressed: 3), .malformedSignal(signature: "s"),
        ]
    }

    func testEverySleepEventHasItsDocumentedKeysAndTypes() throws {
        var names: Set<String> = []
        for kind in everySleepEvent {
            let event = SleepEvent(time: now, kind: kind)
            guard let (name, expected) = Self.expected(kind) else {
                XCTAssertNil(write(event), "\(event.name) is a warning only")
                continue
            }
            let line = try XCTUnwrap(write(event), name)
            XCTAssertEqual(shape(line), expected, line)
            XCTAssertEqual(value(line, "event"), .string(name))
            names.insert(name)
        }
        XCTAssertEqual(names, ["sleep", "resume", "sleep-overridden", "delay-lock-taken", "grace-lock-taken",
                               "delay-lock-released", "grace-lock-released", "delay-lock-unavailable",
                               "grace-lock-unavailable", "state-error"])
    }

    func testSleepEventValues() {
        let overridden = write(SleepEvent(time: now, kind: .overridden(runID: "r", lock: .unavailable, inhibit: "none",
                                                                        holders: 1)), liveCalls: 1)
        XCTAssertEqual(value(overridden, "lock"), .string("unavailable"))
        XCTAssertEqual(value(overridden, "inhibit"), .string("none"))
        XCTAssertEqual(value(write(SleepEvent(time: now, kind: .resume(asleepFor: 3600.5))), "asleep_for"),
                       .number("3600.500"))
        XCTAssertEqual(value(write(SleepEvent(time: now, kind: .lockReleased(.grace, expired: true))), "expired"),
                       .bool(true))
        let grace = write(SleepEvent(time: now, kind: .lockTaken(.grace, InhibitorRequest(), seconds: 10)))
        XCTAssertEqual(value(grace, "seconds"), .number("10.000"))
        XCTAssertEqual(value(grace, "what"), .string("sleep"))
        XCTAssertEqual(value(grace, "mode"), .string("block"))
    }

    // MARK: Backend, ready, stats and exit

    private static func expected(_ notice: BackendNotice) -> (status: String, shape: [String])? {
        let head = ["event:string", "time:time", "backend:string", "status:string"]
        switch notice {
        case .serviceAppeared: return ("appeared", head + ["owner:string"])
        case .serviceVanished: return ("vanished", head)
        case .serviceAbsent: return ("absent", head)
        case .synced: return ("synced", head + ["modems:int", "calls:int"])
        case .syncRefused: return ("sync-refused", head + ["message:string"])
        case .syncFailed: return ("sync-failed", head + ["message:string"])
        case .callUnreadable, .rejectedSignal, .rejectedSuppressed, .malformed, .malformedSuppressed,
             .unreadableSuppressed, .modemsChanged, .emergencyNumbers: return nil
        }
    }

    func testEveryBackendStatusHasItsDocumentedKeysAndTypes() throws {
        let notices: [BackendNotice] = [
            .serviceAppeared(.modemManager, owner: ":1.7"), .serviceVanished(.ofono), .serviceAbsent(.ofono),
            .synced(.modemManager, modems: 2, calls: 1), .syncRefused(.ofono, "AccessDenied"),
            .syncFailed(.modemManager, "timeout"), .callUnreadable(.ofono, "x"),
            .rejectedSignal(.modemManager, sender: ":1.9", member: "StateChanged"),
            .rejectedSuppressed(.modemManager, sender: ":1.9", count: 4), .malformed(.ofono, "bad"),
            .malformedSuppressed(.ofono, count: 2),
        ]
        var statuses: Set<String> = []
        for notice in notices {
            guard let (status, expected) = Self.expected(notice) else {
                XCTAssertNil(write(notice), "\(notice) is a warning only")
                continue
            }
            let line = try XCTUnwrap(write(notice), status)
            XCTAssertEqual(shape(line), expected, line)
            XCTAssertEqual(value(line, "event"), .string("backend"))
            XCTAssertEqual(value(line, "status"), .string(status))
            XCTAssertEqual(value(line, "backend"), .string(notice.backend.rawValue))
            statuses.insert(status)
        }
        XCTAssertEqual(statuses, ["appeared", "vanished", "absent", "synced", "sync-refused", "sync-failed"])
    }

    func testReadyHasOnlyTheLiveCalls() {
        var object = JSONObject()
        schema.writeReady(time: now, liveCalls: 2, into: &object)
        XCTAssertEqual(object.line, #"{"event":"ready","time":"2026-11-29T14:20:45.402Z","live_calls":2}"#)
    }

    func testStatsAndExitCountSignalsAndUptime() {
        for occasion in [ServiceStats.Occasion.stats, .exit] {
            var object = JSONObject()
            schema.write(ServiceStats(occasion: occasion, time: now, signals: 1234, uptime: 61.25), liveCalls: 0,
                         into: &object)
            XCTAssertEqual(shape(object.line), ["event:string", "time:time", "signals:int", "uptime:number",
                                                "live_calls:int"])
            XCTAssertEqual(value(object.line, "event"), .string(occasion.rawValue))
            XCTAssertEqual(value(object.line, "uptime"), .number("61.250"))
        }
        var huge = JSONObject()
        schema.write(ServiceStats(occasion: .exit, time: now, signals: .max, uptime: 0), liveCalls: 0, into: &huge)
        XCTAssertEqual(value(huge.line, "signals")?.integer, Int.max, "clamped, never wrapped negative")
    }

    // MARK: acted

    private func write(_ acted: ActedCall, schema: EventSchema? = nil) -> String {
        var object = JSONObject()
        (schema ?? self.schema).write(acted, time: now, liveCalls: 1, into: &object)
        return object.line
    }

    /// Who asked, what for, and what came of it: the stack's own error name and words when it
    /// refused; the number exactly as given (JSON escapes it), redacted like a caller's.
    func testActedSaysWhoAskedAndWhatCameOfIt() throws {
        let hangUp = ActedCall(kind: .hangup, callID: callID, call: call(), requester: .api, uid: 1000, number: nil,
                               report: CallActReport(.success(mmKey(0)), elapsed: 0.1234))
        let line = write(hangUp)
        XCTAssertEqual(shape(line), ["event:string", "time:time", "act:string", "call_id:string", "backend:string",
                                     "by:string", "uid:int", "number:null", "modem:null", "result:string", "error:null",
                                     "message:null", "elapsed:number", "tones_sent:int", "live_calls:int"])
        XCTAssertEqual(line, #"{"event":"acted","time":"2026-11-29T14:20:45.402Z","act":"hangup","#
                       + #""call_id":"8758f479-318c-412c-8eef-94e245ed8d9f","backend":"modemmanager","by":"api","#
                       + #""uid":1000,"number":null,"modem":null,"result":"ok","error":null,"message":null,"#
                       + #""elapsed":0.123,"tones_sent":0,"live_calls":1}"#)

        let refused = ActedCall(kind: .deflect, callID: callID, call: call(), requester: .mqtt, uid: nil,
                                number: "+15550100", report: CallActReport(.failure(.stackRefused(
                                    name: "org.freedesktop.ModemManager1.Error.Core.Unauthorized",
                                    message: "Not authorized\n\u{1B}[2J")), elapsed: 0.5))
        XCTAssertEqual(value(write(refused), "uid"), .null, "nobody local asked")
        XCTAssertEqual(value(write(refused), "result"), .string("stack-refused"))
        XCTAssertEqual(value(write(refused), "error"), .string("org.freedesktop.ModemManager1.Error.Core.Unauthorized"))
        XCTAssertEqual(value(write(refused), "message"), .string("Not authorized\n\u{1B}[2J"))
        XCTAssertTrue(write(refused).contains(#""message":"Not authorized\n\u001b[2J""#), write(refused))
        XCTAssertEqual(value(write(refused, schema: EventSchema(redactNumbers: true)), "number"), .string("*******00"))

        // A hostile number, refused before the stack: kept exactly, and the refusal in words.
        let hostile = ActedCall(kind: .dial, callID: nil, call: nil, requester: .cli, uid: 0, number: "+1555;+CFUN=0",
                                report: CallActReport(.failure(.refusedNumber(.forbidden(0x3B)))))
        XCTAssertEqual(value(write(hostile), "number"), .string("+1555;+CFUN=0"))
        XCTAssertEqual(value(write(hostile), "call_id"), .null)
        XCTAssertEqual(value(write(hostile), "result"), .string("refused-number"))
        XCTAssertEqual(value(write(hostile), "message"), .string("not a number to dial: ';' is not a dial character"))
    }
}
