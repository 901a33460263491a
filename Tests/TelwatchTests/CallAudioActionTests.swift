import CallMonitor
import DBus
import Glibc
import Loop
import TestSupport
import XCTest

/// `--call-audio`: the project's callaudiod mock for the switches that work, Debian's real
/// callaudiod (no sound server here, so its switch never completes) for the one that does not.
final class CallAudioActionTests: PhoneActionTestCase {
    let callMode = "uint32 1"
    let defaultMode = "uint32 0"

    /// A call answered, a second one waiting, the first held, the second answered, the two
    /// swapped, both hung up: call mode is selected once, at the first answer, and released once,
    /// after the last call ended; never in between.
    func testCallModeIsSelectedOnceAndReleasedOnceThroughWaitingHoldAndSwap() throws {
        try session.startMock(template: "callaudiod", owning: "org.mobian_project.CallAudio")
        try startModemManager()
        let telwatch = try startWatchWithActions(["--call-audio"])

        let (first, _) = try ringSeen("+15551230001")
        XCTAssertNotNil(nextEvent(telwatch, "incoming"))
        let answered = try setStateSeen(first, .active, reason: .accepted)
        let selected = sessionTraffic.waitFor(isCall("SelectMode", callMode))
        assertPrompt(selected, after: answered, "call mode on answer")
        XCTAssertEqual(selected.flatMap { sessionTraffic.reply(to: $0) }?.arguments, ["boolean true"])

        let second = try control("Wait", [.objectPath(try .init(Self.modem0)), .string("+15551230002")])
            .first?.objectPath?.rawValue ?? ""
        try setStateSeen(first, .held, reason: .accepted)
        try setStateSeen(second, .active, reason: .accepted)
        try setStateSeen(second, .held, reason: .accepted)
        try setStateSeen(first, .active, reason: .accepted)
        try setStateSeen(second, .terminated, reason: .terminated)
        let lastEnd = try setStateSeen(first, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
        let released = sessionTraffic.waitFor(isCall("SelectMode", defaultMode))
        assertPrompt(released, after: lastEnd, "the default mode after the last call")
        sessionTraffic.drain()
        let switches = sessionTraffic.seen().filter(isCall("SelectMode"))
        XCTAssertEqual(switches.map(\.arguments), [[callMode], [defaultMode]], "the mode flapped: \(switches)")
        XCTAssertEqual(telwatch.log(), "")
    }

    /// Debian's callaudiod with no sound server never completes a switch: one clear line, and
    /// the calls, the run and telwatch go on.
    func testACallaudiodThatCannotSwitchIsOneLine() throws {
        _ = try session.start(["callaudiod"], extraEnvironment: ["HOME=" + session.directory], name: "callaudiod")
        try session.waitForName("org.mobian_project.CallAudio")
        try startModemManager()
        let telwatch = try startWatchWithActions(["--call-audio"])

        let (call, _) = try ringSeen("+15551230001")
        try setStateSeen(call, .active, reason: .accepted)
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("SelectMode", callMode)))
        XCTAssertTrue(Files.waitUntil(telwatch.logPath ?? "", timeout: 15) { !telwatch.log().isEmpty })
        XCTAssertEqual(telwatch.log(), "telwatch: call-audio: callaudiod did not switch the audio to call mode within 5 s "
                       + "(is its sound server running?); said once until it works again\n")
        try setStateSeen(call, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"), "the calls went on")
        XCTAssertTrue(telwatch.isRunning)
    }

    /// A callaudiod that answers every switch with false: one line for two calls' four switches.
    func testACallaudiodThatRefusesEverySwitchIsSaidOnce() throws {
        try session.startMock(template: "callaudiod", owning: "org.mobian_project.CallAudio",
                              parameters: #"{"refuse": true}"#)
        try startModemManager()
        let telwatch = try startWatchWithActions(["--call-audio"])
        for number in ["+15551230001", "+15551230002"] {
            let (call, _) = try ringSeen(number)
            try setStateSeen(call, .active, reason: .accepted)
            try setStateSeen(call, .terminated, reason: .terminated)
            XCTAssertNotNil(nextEvent(telwatch, "run-stopped"))
            let release = sessionTraffic.waitFor(isCall("SelectMode", defaultMode))
            XCTAssertEqual(release.flatMap { sessionTraffic.reply(to: $0) }?.arguments, ["boolean false"])
        }
        XCTAssertEqual(telwatch.log(), "telwatch: call-audio: callaudiod could not switch the audio to call mode "
                       + "(SelectMode(1) answered false); said once until it works again\n")
    }

    /// A callaudiod whose SelectMode answers something other than a boolean (another version, a
    /// stand-in) has not said that it switched: one line, not silence taken for success.
    func testASelectModeAnswerThatIsNoBooleanIsOneLine() throws {
        try session.startMock(template: "callaudiod", owning: "org.mobian_project.CallAudio")
        let loop = try EventLoop()
        let client = try Connection(.address(session.address), loop: loop)
        defer { client.close() }
        try client.callValues("org.mobian_project.CallAudio", "/org/mobian_project/CallAudio", "org.freedesktop.DBus.Mock",
                              "AddMethod", [.string("org.mobian_project.CallAudio"), .string("SelectMode"), .string("u"),
                                            .string("s"), .string("ret = 'switched'")], timeout: 10)
        try startModemManager()
        let telwatch = try startWatchWithActions(["--call-audio"])

        let (call, _) = try ringSeen("+15551230001")
        try setStateSeen(call, .active, reason: .accepted)
        XCTAssertNotNil(sessionTraffic.waitFor(isCall("SelectMode", callMode)))
        XCTAssertTrue(Files.waitUntil(telwatch.logPath ?? "", timeout: 10) { !telwatch.log().isEmpty }, "nothing said")
        XCTAssertEqual(telwatch.log(), "telwatch: call-audio: callaudiod answered SelectMode(1) with 's', not whether it "
                       + "could switch the audio to call mode; said once until it works again\n")
        try setStateSeen(call, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(telwatch, "run-stopped"), "the calls went on")
    }
}
