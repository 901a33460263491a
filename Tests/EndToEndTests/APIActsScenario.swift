import DBus
import Foundation
import TestSupport
import XCTest

/// Acts on calls through telwatch's D-Bus API (docs/dbus-api.md, "Acts on calls"), on the real
/// daemon and the simulated modem: each method reaches the modem as its AT command, each reply
/// waits for the stack, every refusal is decided before the stack hears anything, and each act
/// is told on the event stream as `acted`, with who asked. Written once for both daemons.
extension EndToEndTestCase {
    private static let api = "io.telwatch.Monitor1"
    private static let root = "/io/telwatch/Monitor1"
    private static let callInterface = "io.telwatch.Call1"
    private static let errors = "io.telwatch.Monitor1.Error."

    /// A Call1 or Monitor1 method, as a client of the API; `requester` goes in the options.
    @discardableResult
    private func apiCall(_ path: String, _ member: String, _ arguments: [DBusValue] = [], requester: String? = nil,
                         interface: String = callInterface) throws -> [DBusValue] {
        let options = DBusValue.dictionary(keySignature: "s", valueSignature: "v", requester.map {
            [.init(.string("requester"), .variant(.string($0)))]
        } ?? [])
        return try world.bus.call(Self.api, path, interface, member, arguments + [options])
    }

    /// The D-Bus error name an API call answers with (nil when it succeeds).
    private func apiError(_ path: String, _ member: String, _ arguments: [DBusValue] = [], requester: String? = nil,
                          interface: String = callInterface) -> String? {
        do {
            try apiCall(path, member, arguments, requester: requester, interface: interface)
            return nil
        } catch let error as DBusError {
            return error.name.map { $0.hasPrefix(Self.errors) ? String($0.dropFirst(Self.errors.count)) : $0 }
        } catch {
            return "\(error)"
        }
    }

    /// The object path of the call labelled `label` (its first line read already).
    private func apiPath(_ label: String) throws -> String {
        let id = try XCTUnwrap(world.callEvents(label).first?["call_id"] as? String, "call \(label) has no line")
        return Self.root + "/Call/" + id.replacingOccurrences(of: "-", with: "")
    }

    /// The last `acted` line telwatch printed, as JSON.
    private func lastActed() -> [String: Any]? {
        world.transcript.reversed().lazy.compactMap(JSONLine.object).first { $0["event"] as? String == "acted" }
    }

    /// Lines until each of `wanted` has come, in whatever order the stack's reply and its
    /// signals make (an act's reply may come before or after the call's change).
    private func expectAll(_ wanted: [String], file: StaticString = #filePath, line: UInt = #line) {
        var seen: [String] = []
        for target in wanted where !seen.contains(target) { seen += world.lines(through: target) }
        for target in wanted { XCTAssertTrue(seen.contains(target), "\(target) not in \(seen)", file: file, line: line) }
    }

    /// Lines up to `acted`, which must be among them.
    private func expectActed(_ acted: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(world.lines(through: acted).last, acted, file: file, line: line)
    }

    func apiActsReachTheModemAndAreTold() throws {
        try startDaemonAndTelwatch()

        // Answer: ATA, and the reply once the stack answered; the event says who asked.
        try modem.ring("+15551234")
        _ = world.lines(through: line("incoming", "A", detail: "ringing", dir: "incoming", number: "+15551234", live: 1))
        let first = try apiPath("A")
        var mark = try modem.mark()
        try apiCall(first, "Answer")
        try modem.awaitCommand("^ATA$", since: mark)
        expectActed("acted answer A by=api result=ok")
        let answered = try XCTUnwrap(lastActed())
        XCTAssertEqual(answered["uid"] as? Int, Int(getuid()), "the caller's uid")
        XCTAssertTrue(answered["elapsed"] is Double || answered["elapsed"] is Int, "\(answered)")
        XCTAssertEqual(answered["number"] as? NSNull, NSNull())

        // Tones, for the command line (`requester`), in order.
        mark = try modem.mark()
        try apiCall(first, "SendTones", [.string("1#")], requester: "cli")
        expectActed("acted tones A by=cli result=ok")
        XCTAssertEqual(lastActed()?["tones_sent"] as? Int, 2)
        XCTAssertNotNil(try modem.seen("^AT\\+VTS=1", since: mark), modem.dialogue)
        XCTAssertNotNil(try modem.seen("^AT\\+VTS=#$|VTS=1;\\+VTS=#$", since: mark), modem.dialogue)

        // Hang up.
        mark = try modem.mark()
        try apiCall(first, "Hangup")
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        expectAll(["acted hangup A by=api result=ok", runStopped])

        // Deflect a ringing call.
        try modem.ring("+15550002")
        _ = world.lines(through: line("incoming", "B", detail: "ringing", dir: "incoming", number: "+15550002", live: 1))
        mark = try modem.mark()
        try apiCall(try apiPath("B"), "Deflect", [.string("+15559876543")])
        try modem.awaitCommand("^AT\\+CTFR=(\\+15559876543|15559876543,145)$", since: mark)
        expectAll(["acted deflect B by=api result=ok", runStopped])
        XCTAssertEqual(lastActed()?["number"] as? String, "+15559876543")

        // Dial on the only voice modem: the reply is the new call's object.
        mark = try modem.mark()
        let dialled = try apiCall(Self.root, "Dial", [.string("+15550123"), .string("")], interface: Self.api)
        try modem.awaitCommand("^ATD\\+15550123;$", since: mark)
        expectActed("acted dial C by=api result=ok")
        XCTAssertEqual(dialled.first?.objectPath?.rawValue, try apiPath("C"))
        try apiCall(try apiPath("C"), "Hangup")
        expectAll(["acted hangup C by=api result=ok", runStopped])
        world.stopTelwatch()
    }

    func apiRefusalsNeverReachTheModem() throws {
        try startDaemonAndTelwatch()
        let mark = try modem.mark()
        try modem.ring("+15550006")
        _ = world.lines(through: line("incoming", "A", detail: "ringing", dir: "incoming", number: "+15550006", live: 1))
        let ringing = try apiPath("A")

        // A number with an AT command in it, an emergency number: refused before the stack, told.
        XCTAssertEqual(apiError(Self.root, "Dial", [.string("+1555;+CFUN=0"), .string("")], interface: Self.api),
                       "RefusedNumber")
        expectActed("acted dial - by=api result=refused-number")
        XCTAssertEqual(lastActed()?["number"] as? String, "+1555;+CFUN=0")
        XCTAssertEqual(apiError(Self.root, "Dial", [.string("112"), .string("")], requester: "cli", interface: Self.api),
                       "EmergencyNumber")
        expectActed("acted dial - by=cli result=emergency-number")
        XCTAssertEqual(apiError(ringing, "Deflect", [.string("911")]), "EmergencyNumber")
        expectActed("acted deflect A by=api result=emergency-number")
        XCTAssertEqual(apiError(ringing, "SendTones", [.string("1\r\nAT+CFUN=0")]), "RefusedNumber")
        expectActed("acted tones A by=api result=refused-number")
        // Who asks is `api` or `cli`: nothing else, and no other option.
        XCTAssertEqual(apiError(ringing, "Hangup", requester: "rule"), "org.freedesktop.DBus.Error.InvalidArgs")

        // Gone: its object with it; an act on a call not ringing is refused.
        try modem.remoteHangup()
        XCTAssertEqual(world.lines(through: runStopped).last, runStopped)
        XCTAssertEqual(apiError(ringing, "Hangup"), "org.freedesktop.DBus.Error.UnknownObject")
        _ = try daemon.dial("+15550777")
        _ = world.lines(through: line("dialing", "B", detail: "dialing", dir: "outgoing", number: "+15550777", live: 1))
        XCTAssertEqual(apiError(try apiPath("B"), "Answer"), "NotRinging")
        expectActed("acted answer B by=api result=not-ringing")
        try apiCall(try apiPath("B"), "Hangup")
        expectAll(["acted hangup B by=api result=ok", runStopped])

        for pattern in ["CFUN", "CTFR", "ATD112", "^ATA$"] {
            XCTAssertNil(try modem.seen(pattern, since: mark), "\(pattern): \(modem.dialogue)")
        }
        world.stopTelwatch()
    }

    /// polkit refuses telwatch's actions (and only them: the stack itself may still act):
    /// NotPermitted, nothing reaches the modem, and nothing was acted. Then polkit lets the caller
    /// hang up but refuses ModemManager: StackRefused, in ModemManager's own words.
    func apiActRefusedByPolkitIsNotPermitted() throws {
        try startDaemonAndTelwatch()
        try world.bus.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                           "org.freedesktop.DBus.Mock", "SetAllowed", [.array(elementSignature: "s", [
                               .string("org.freedesktop.ModemManager1.Voice"),
                           ])])
        try world.bus.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                           "org.freedesktop.DBus.Mock", "AllowUnknown", [.bool(false)])
        let mark = try modem.mark()
        try modem.ring("+15550008")
        _ = world.lines(through: line("incoming", "A", detail: "ringing", dir: "incoming", number: "+15550008", live: 1))
        let ringing = try apiPath("A")
        XCTAssertEqual(apiError(ringing, "Hangup"), "NotPermitted")
        XCTAssertEqual(apiError(ringing, "Answer", requester: "cli"), "NotPermitted")
        XCTAssertEqual(apiError(Self.root, "Dial", [.string("+15550123"), .string("")], interface: Self.api), "NotPermitted")
        XCTAssertThrowsError(try world.bus.call(Self.api, Self.root, Self.api, "Silence", [.string("")])) {
            XCTAssertEqual(($0 as? DBusError)?.name, Self.errors + "NotPermitted")
        }

        // telwatch lets the caller hang up, ModemManager refuses telwatch: its own words, told.
        try world.bus.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                           "org.freedesktop.DBus.Mock", "SetAllowed", [.array(elementSignature: "s", [
                               .string("io.telwatch.answer-hangup"),
                           ])])
        do {
            try apiCall(ringing, "Hangup")
            XCTFail("ModemManager hung up without polkit's leave")
        } catch let error as DBusError {
            XCTAssertEqual(error.name, Self.errors + "StackRefused")
            XCTAssertTrue("\(error)".contains("org.freedesktop.ModemManager1.Error.Core.Unauthorized: "), "\(error)")
        }
        let refused = "acted hangup A by=api result=stack-refused"
        let lines = world.lines(through: refused)
        XCTAssertEqual(lines.filter { $0.hasPrefix("acted") }, [refused], "nothing polkit refused was acted: \(lines)")
        XCTAssertEqual(lastActed()?["error"] as? String, "org.freedesktop.ModemManager1.Error.Core.Unauthorized")
        try modem.remoteHangup()
        XCTAssertEqual(world.lines(through: runStopped).last, runStopped)
        for pattern in [Self.hangUpCommand, "^ATA$", "ATD"] {
            XCTAssertNil(try modem.seen(pattern, since: mark), "\(pattern): \(modem.dialogue)")
        }
        world.stopTelwatch()
    }
}
