import XCTest

/// The modem's identity in a real daemon's calls: what the simulated modem answers to `AT+CGSN`
/// (IMEI), `AT+CNUM` (own number) and `AT+COPS?` (operator), as far as the daemon exports it
/// (docs/modem-stacks.md §11).
extension EndToEndTestCase {
    /// The identity keys of a call's lines, as the daemon under test exports them.
    var expectedIdentity: [String: String?] {
        switch kind {
        case .modemManager:
            return ["modem_id": ATModem.imei, "modem_number": ATModem.ownNumber, "operator": ATModem.operatorLong]
        case .ofono:
            // oFono's modem object has the serial only (the rest is on other interfaces, not read).
            return ["modem_id": ATModem.imei, "modem_number": nil, "operator": nil]
        }
    }

    func modemIdentityOnEveryLine() throws {
        try startDaemonAndTelwatch()
        try modem.ring("+15550007")
        expectCallStartingARun(line("incoming", "A", detail: "ringing", dir: "incoming", number: "+15550007", live: 1),
                               reason: "incoming")
        try modem.remoteHangup()
        world.expect([line("disconnected", "A", prev: "incoming", dir: "incoming", number: "+15550007",
                           reason: reasons.callerGaveUp, flags: ["missed"], live: 0),
                      line("missed", "A", state: "disconnected", dir: "incoming", number: "+15550007",
                           reason: reasons.callerGaveUp, flags: ["missed"], live: 0),
                      runStopped])
        let lines = world.callEvents("A")
        XCTAssertEqual(lines.count, 3)
        for object in lines {
            for (key, value) in expectedIdentity.sorted(by: { $0.key < $1.key }) {
                XCTAssertEqual(object[key] as? String, value, "\(key) in \(object)")
                XCTAssertTrue(object.keys.contains(key), "\(key) is always there (null when unknown)")
            }
        }
    }
}
