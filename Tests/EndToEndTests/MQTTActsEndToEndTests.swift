import XCTest

/// Acts asked over MQTT on Debian's ModemManager and the simulated AT modem.
final class ModemManagerMQTTActsTests: EndToEndTestCase {
    override var kind: DaemonKind { .modemManager }

    func testMQTTCommandsReachTheModem() throws { try mqttCommandsReachTheModem() }
    func testMQTTActsReachTheModemInTime() throws { try mqttActsReachTheModemInTime() }
}

/// Acts asked over MQTT on Debian's oFono and the simulated AT modem.
final class OfonoMQTTActsTests: EndToEndTestCase {
    override var kind: DaemonKind { .ofono }
    override var initialDirection: String { "unknown" }

    func testMQTTCommandsReachTheModem() throws { try mqttCommandsReachTheModem() }
    func testMQTTActsReachTheModemInTime() throws { try mqttActsReachTheModemInTime() }
}
