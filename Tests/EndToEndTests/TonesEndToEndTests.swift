import TestSupport
import XCTest

/// Tones the far end presses, from the modem's own code through Debian's ModemManager
/// (`DtmfReceived`, docs/modem-stacks.md §14) to telwatch's `tones` line. The simulated AT modem
/// is probed as a SIMCom modem: ModemManager's simtech plugin reads `+RXDTMF: <c>` (1.20 and
/// later; the generic plugin reads no tone at all).
final class ModemManagerTonesEndToEndTests: EndToEndTestCase {
    override var kind: DaemonKind { .modemManager }

    func testASIMComModemsTonesReachTheStreamUnderTheCall() throws {
        let daemon = try XCTUnwrap(self.daemon as? ModemManagerDaemon)
        daemon.plugin = "simtech"
        // A tones hook that appends what it was given, as a gate opener would read it.
        let hooks = world.fixture.directory + "/hooks"
        let record = world.fixture.directory + "/tones-heard"
        try Files.makeDirectory(hooks)
        try Files.script(hooks + "/tones", #"printf '%s %s %s\n' "$TELWATCH_CALL_ID" "$TELWATCH_TONES" "$TELWATCH_TONES_DROPPED" >> "\#(record)""#)
        try startDaemonAndTelwatch(["--hooks", hooks])
        let number = "+15551234"
        _ = try incomingAnswered(number)

        try modem.send("urc +RXDTMF: 5")
        world.expect(["tones A 5 dropped=0"])
        try modem.send("urc +RXDTMF: #")
        try modem.send("urc +RXDTMF: D")
        // In one turn, or one each: paced per call, never lost.
        world.expect(["tones A #D dropped=0"], or: ["tones A # dropped=0", "tones A D dropped=0"])
        let tones = world.transcript.compactMap(JSONLine.object).filter { $0["event"] as? String == "tones" }
        let callID = world.callEvents("A").first?["call_id"] as? String
        XCTAssertEqual(Set(tones.map { $0["call_id"] as? String }), [callID])
        XCTAssertEqual(Set(tones.map { $0["number"] as? String }), [number])
        // The hook ran once per line, in order, with the call's id and the tones as the line has them.
        let expected = tones.map { "\($0["call_id"] as? String ?? "?") \($0["tones"] as? String ?? "?") 0\n" }.joined()
        XCTAssertTrue(Files.waitUntil(record, timeout: 10) { Files.text(record) == expected },
                      "the hook wrote \(Files.text(record) ?? "nothing"), not \(expected)")

        try modem.remoteHangup()
        world.expect([line("disconnected", "A", prev: "connected", dir: "incoming", number: number,
                           reason: reasons.remoteHangup, live: 0), runStopped])
        world.stopTelwatch()
    }

    /// A Quectel modem (ModemManager's quectel plugin from 1.24, Debian 13) reports a tone as its
    /// ASCII code (`+QTONEDET: 53`), and ModemManager passes the code on as it is: telwatch reads
    /// it as the tone. Debian 12's 1.20 has no such report: skipped there (the Debian 13 checks
    /// run it).
    func testAQuectelModemsToneCodesReachTheStreamAsTones() throws {
        let daemon = try XCTUnwrap(self.daemon as? ModemManagerDaemon)
        daemon.plugin = "quectel"
        try startDaemonAndTelwatch()
        let version = try daemon.version()
        let parts = version.split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2, (parts[0], parts[1]) >= (1, 24) else {
            throw XCTSkip("ModemManager \(version) reads no +QTONEDET (1.24 and later do)")
        }
        let number = "+15551235"
        _ = try incomingAnswered(number)
        try modem.send("urc +QTONEDET: 53")
        world.expect(["tones A 5 dropped=0"])
        try modem.send("urc +QTONEDET: 35")
        world.expect(["tones A # dropped=0"])
        try modem.remoteHangup()
        world.expect([line("disconnected", "A", prev: "connected", dir: "incoming", number: number,
                           reason: reasons.remoteHangup, live: 0), runStopped])
        world.stopTelwatch()
    }
}
