import CallMonitor
import Foundation
import Loop
import TestSupport
import XCTest

/// Acts on calls (docs/modem-stacks.md §13) on the real daemon: each reaches the simulated modem
/// as the AT command the stack sends for it; every refusal is decided before the stack is asked,
/// so nothing of a hostile number or an emergency number ever reaches the modem. Written once
/// for both daemons.
extension EndToEndTestCase {
    static let hangUpCommand = "^(ATH|AT\\+CHUP|AT\\+CHLD=1[0-9])$"

    private func startDaemonAndActingMonitor() throws -> ActingMonitor {
        try daemon.start()
        return try ActingMonitor(bus: world.bus, kind: kind)
    }

    /// The AT commands of `tones` as the stack sends them: ModemManager one `AT+VTS` per
    /// `SendDtmf` (it sends one tone per call), oFono all in one line.
    private func toneCommands(_ tones: String) -> [String] {
        let each = tones.map { "+VTS=\($0)" }
        return kind == .modemManager ? each.map { "AT" + $0 } : ["AT" + each.joined(separator: ";")]
    }

    private static func pattern(_ command: String) -> String {
        "^" + NSRegularExpression.escapedPattern(for: command) + "$"
    }

    func actsReachTheModem() throws {
        let acting = try startDaemonAndActingMonitor()
        defer { acting.stop() }

        // Answer: ATA; a second answer, and a deflect, on the connected call are refused here.
        var mark = try modem.mark()
        try modem.ring("+15551234")
        var call = try acting.call("+15551234", in: .incoming)
        XCTAssertEqual(try acting.act(.answer, on: call.key).outcome, .success(call.key))
        try modem.awaitCommand("^ATA$", since: mark)
        call = try acting.call("+15551234", in: .connected)
        XCTAssertEqual(acting.refusal(.answer, on: call.key)?.failure, .notRinging(.connected))
        XCTAssertEqual(acting.refusal(.deflect(to: "+15559876"), on: call.key)?.failure, .notRinging(.connected))

        // Tones, in order.
        mark = try modem.mark()
        let tones = try acting.act(.sendTones("1#9"), on: call.key)
        XCTAssertEqual(tones.outcome, .success(call.key))
        XCTAssertEqual(tones.tonesSent, 3)
        var after = mark
        for command in toneCommands("1#9") {
            let seen = try XCTUnwrap(try modem.seen(Self.pattern(command), since: after), "\(command): \(modem.dialogue)")
            XCTAssertEqual(seen.command, command)
            after = seen.count
        }

        // Hang up.
        mark = try modem.mark()
        XCTAssertEqual(try acting.act(.hangUp, on: call.key).outcome, .success(call.key))
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        try acting.waitIdle()
        XCTAssertEqual(try modem.calls(), [])

        // Deflect: formatting dropped, the call leaves the modem unanswered. Neither stack quotes
        // the number: ModemManager writes it as given, oFono without its `+`, as type 145.
        mark = try modem.mark()
        try modem.ring("+15550002")
        call = try acting.call("+15550002", in: .incoming)
        XCTAssertEqual(try acting.act(.deflect(to: "+1 555 987-6543"), on: call.key).outcome, .success(call.key))
        try modem.awaitCommand("^AT\\+CTFR=(\\+15559876543|15559876543,145)$", since: mark)
        try acting.waitIdle()
        XCTAssertEqual(try modem.calls(), [])

        // Dial: the new call is the one the stack follows.
        mark = try modem.mark()
        let dialled = try acting.dial("+15550123")
        let key = try dialled.outcome.get()
        try modem.awaitCommand("^ATD\\+15550123;$", since: mark)
        try acting.waitForCalls("the dialled call") { $0.contains { $0.key == key && $0.number == "+15550123" } }
        mark = try modem.mark()
        XCTAssertEqual(try acting.act(.hangUp, on: key).outcome, .success(key))
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        try acting.waitIdle()

        // No such call.
        let nothing = CallKey(backend: key.backend, path: key.path + "9")
        XCTAssertEqual(acting.refusal(.hangUp, on: nothing)?.failure, .noSuchCall)
    }

    /// An emergency number or a number or tone string with anything but dial characters is
    /// refused at once, before the stack is asked: the modem never sees it.
    func refusalsNeverReachTheModem() throws {
        let acting = try startDaemonAndActingMonitor()
        defer { acting.stop() }
        let start = try modem.mark()

        for number in ["112", "+112", "911#", "*31#112", "00112", "1-1-2", "999"] {
            XCTAssertEqual(acting.dialRefusal(number)?.failure, .emergencyNumber, number)
        }
        if kind == .ofono {
            // Not a common emergency number: oFono's own list (EmergencyNumbers) has it.
            XCTAssertEqual(acting.dialRefusal("08")?.failure, .emergencyNumber, "oFono's list")
        }
        let semicolon = DialStringRefusal.forbidden(0x3B)
        XCTAssertEqual(acting.dialRefusal("+1555;+CFUN=0")?.failure, .refusedNumber(semicolon))
        XCTAssertEqual(acting.dialRefusal("+1555\n")?.failure, .refusedNumber(.forbidden(0x0A)))
        XCTAssertEqual(acting.dialRefusal("+1555,1")?.failure, .refusedNumber(.forbidden(0x2C)))

        try modem.ring("+15550003")
        let call = try acting.call("+15550003", in: .incoming)
        XCTAssertEqual(acting.refusal(.deflect(to: "112"), on: call.key)?.failure, .emergencyNumber)
        XCTAssertEqual(acting.refusal(.deflect(to: "+1555;+CFUN=0"), on: call.key)?.failure, .refusedNumber(semicolon))
        XCTAssertEqual(acting.refusal(.sendTones("1;+CFUN=0"), on: call.key)?.failure, .refusedNumber(semicolon))
        XCTAssertEqual(acting.refusal(.sendTones("1\r"), on: call.key)?.failure, .refusedNumber(.forbidden(0x0D)))

        // The hang-up comes after every refusal: what the modem saw before it is all it will see of them.
        let mark = try modem.mark()
        XCTAssertEqual(try acting.act(.hangUp, on: call.key).outcome, .success(call.key))
        try modem.awaitCommand(Self.hangUpCommand, since: mark)
        try acting.waitIdle()
        for pattern in ["CFUN=0", "^ATD", "CTFR", "VTS"] {
            XCTAssertNil(try modem.seen(pattern, since: start), "\(pattern): \(modem.dialogue)")
        }
    }
}

extension EndToEndTestCase {
    /// A stack that refuses an act is quoted: its own error name and words. A call ModemManager
    /// made but could not start is deleted again.
    func stackRefusalComesInItsOwnWords() throws {
        try daemon.start()
        let acting = try ActingMonitor(bus: world.bus, kind: kind)
        defer { acting.stop() }
        try modem.send("set dial-result ERROR")
        let mark = try modem.mark()
        let report = try acting.dial("+15550123")
        try modem.awaitCommand("^ATD\\+15550123;$", since: mark)
        guard case .stackRefused(let name, _)? = report.failure else {
            return XCTFail("\(report)")
        }
        let prefix = kind == .modemManager ? "org.freedesktop.ModemManager1.Error." : "org.ofono.Error."
        XCTAssertTrue(name.hasPrefix(prefix), name)
        XCTAssertGreaterThan(report.elapsed, 0)
        try acting.waitIdle()
        try world.bus.wait("the stack listing no call", timeout: 10) { (try? daemon.liveCalls().isEmpty) == true }
    }
}

extension EndToEndTestCase {
    /// The stack dies with an act asked of it and not answered (stopped, then killed): the act is
    /// answered all the same, `stackGone`, once the stack's name is gone.
    func actWhoseStackDiesIsAnswered() throws {
        try daemon.start()
        let acting = try ActingMonitor(bus: world.bus, kind: kind)
        defer { acting.stop() }
        try modem.ring("+15550004")
        let call = try acting.call("+15550004", in: .incoming)
        let process = try XCTUnwrap(daemon.process)
        process.signal(SIGSTOP)
        var report: CallActReport?
        acting.monitor.act(.answer, on: call.key) { report = $0 }
        daemon.kill()
        try world.bus.wait("the answer to an act whose stack died", timeout: 20) { report != nil }
        XCTAssertEqual(report?.failure, .stackGone)
        XCTAssertGreaterThan(report?.elapsed ?? 0, 0)
        try acting.waitIdle()
    }
}

extension EndToEndTestCase {
    /// An answer racing the caller's own hang-up: asked while the call still rings for telwatch,
    /// it is answered either way (done, or the stack's refusal), and nothing is left live.
    func answerRacingTheCallersHangUpIsAnswered() throws {
        try daemon.start()
        let acting = try ActingMonitor(bus: world.bus, kind: kind)
        defer { acting.stop() }
        try modem.ring("+15550005")
        let call = try acting.call("+15550005", in: .incoming)
        try modem.remoteHangup()
        let report = try acting.act(.answer, on: call.key)
        // ModemManager: Connection.NoCarrier (the modem answered ATA so); oFono: Error.Failed, or
        // UnknownObject once the call object is gone.
        switch report.outcome {
        case .success, .failure(.stackRefused): break
        case .failure(let failure): XCTFail("\(failure)")
        }
        try acting.waitIdle()
        XCTAssertEqual(try modem.calls(), [])
    }
}

extension EndToEndTestCase {
    static let hangUpAllCommand = "^(ATH|AT\\+CHUP|AT\\+CHLD=[0-9]+)$"

    /// Answering a call that waits while another is connected puts the connected one on hold and
    /// says so; the stacks' per-call answer (`Call.Accept`, `VoiceCall.Answer`) is not it: they
    /// refuse it for a waiting call. Hanging up all then ends both, the held one too.
    func answerWaitingHoldsTheConnectedCallThenHangUpAll() throws {
        try daemon.start()
        let acting = try ActingMonitor(bus: world.bus, kind: kind)
        defer { acting.stop() }

        var mark = try modem.mark()
        try modem.ring("+15551111")
        let first = try acting.call("+15551111", in: .incoming)
        XCTAssertEqual(try acting.act(.answer, on: first.key).held, [])
        try modem.awaitCommand("^ATA$", since: mark)
        _ = try acting.call("+15551111", in: .connected)

        try modem.waiting("+15552222")
        try acting.waitForCalls("a waiting call") { calls in
            calls.contains { $0.number == "+15552222" && $0.detail == .waiting }
        }
        let second = try XCTUnwrap(acting.monitor.liveCalls.first { $0.number == "+15552222" })
        mark = try modem.mark()
        let answered = try acting.act(.answer, on: second.key)
        XCTAssertEqual(answered.outcome, .success(second.key))
        XCTAssertEqual(answered.held, [first.key])
        try modem.awaitCommand("^AT\\+CHLD=2$", since: mark)
        try acting.waitForCalls("the first call held, the second active") { calls in
            calls.contains { $0.key == first.key && $0.detail == .held }
                && calls.contains { $0.key == second.key && $0.state == .connected && $0.detail == .active }
        }
        XCTAssertNil(try modem.seen("^ATA$", since: mark), modem.dialogue)

        mark = try modem.mark()
        let ended = try acting.hangUpAll()
        XCTAssertEqual(try ended.outcome.get().map(\.stack), [kind == .modemManager ? .modemManager : .ofono])
        try modem.awaitCommand(Self.hangUpAllCommand, since: mark)
        try acting.waitIdle()
        XCTAssertEqual(try modem.calls(), [])
    }

    /// Hanging up all on a modem no followed stack has is refused before any stack is asked.
    func hangUpAllOnAnUnknownModemIsRefused() throws {
        try daemon.start()
        let acting = try ActingMonitor(bus: world.bus, kind: kind)
        defer { acting.stop() }
        var report: HangUpAllReport?
        acting.monitor.hangUpAll(modem: "/no/such/modem") { report = $0 }
        XCTAssertEqual(report?.failure, .noSuchModem)
    }
}
