import Foundation
import MQTTExport
import XCTest
@testable import telwatch

/// The `mqtt*` settings parsed in-process: what a user may write, and what is refused with one line.
final class MQTTOptionTests: XCTestCase {
    func testBrokerURLs() {
        XCTAssertEqual(MQTTBroker(url: "mqtt://broker"), MQTTBroker(host: "broker", port: 1883, tls: false))
        XCTAssertEqual(MQTTBroker(url: "mqtts://broker"), MQTTBroker(host: "broker", port: 8883, tls: true))
        XCTAssertEqual(MQTTBroker(url: "mqtt://127.0.0.1:1884"), MQTTBroker(host: "127.0.0.1", port: 1884, tls: false))
        XCTAssertEqual(MQTTBroker(url: "mqtt://[::1]:1884"), MQTTBroker(host: "::1", port: 1884, tls: false))
        for bad in ["http://broker", "mqtt://", "mqtt://user:pw@broker", "mqtt://broker/topic", "mqtt://broker:0",
                    "mqtt://broker:70000", "mqtt://broker:x", "broker:1883", "mqtt://[::1"] {
            XCTAssertNil(MQTTBroker(url: bad), bad)
        }
    }

    func testTopicDefaultsToTheHostNameAndRefusesWildcards() throws {
        let settings = MQTTSettings(broker: MQTTBroker(host: "b", port: 1883, tls: false), hostName: "phone")
        XCTAssertEqual(settings.topic, "telwatch/phone")
        XCTAssertEqual(MQTTSettings.expand("home/%h/calls", hostName: "phone"), "home/phone/calls")
        var options = WatchOptions()
        for bad in ["a/#", "a/+/b", "/a", "a/", ""] {
            XCTAssertThrowsError(try options.set("mqtt-topic", bad), bad)
        }
    }

    func testCredentialsComeFromAFileAndTLSFilesNeedMQTTS() throws {
        let path = NSTemporaryDirectory() + "telwatch-mqtt-credentials-\(getpid())"
        defer { unlink(path) }
        try "phone\nsecret\n".write(toFile: path, atomically: true, encoding: .utf8)
        var options = WatchOptions()
        try options.set("mqtt", "mqtt://127.0.0.1")
        try options.set("mqtt-credentials", path)
        let settings = try XCTUnwrap(try options.mqtt.settings())
        XCTAssertEqual(settings.user, "phone")
        XCTAssertEqual(settings.password, "secret")
        try options.set("mqtt-ca", "/etc/ssl/ca.pem")
        XCTAssertThrowsError(try options.mqtt.settings(), "a CA for a plain mqtt:// broker is a mistake")
        XCTAssertNil(try WatchOptions().mqtt.settings(), "no --mqtt: nothing of MQTT")
    }

    /// Every MQTT setting but the user and password (never on argv) has its flag as well as its key.
    func testEveryMQTTSettingHasItsFlag() throws {
        let options = try XCTUnwrap(try WatchArguments.parse([
            "--mqtt", "mqtt://127.0.0.1", "--mqtt-discovery-prefix", "ha", "--mqtt-homeassistant", "false",
            "--mqtt-keepalive", "30s", "--mqtt-reconnect-max", "5s", "--mqtt-outbox-limit", "100",
            "--mqtt-outbox-max-age", "1h", "--mqtt-max-message=2048",
        ]))
        let settings = try XCTUnwrap(try options.mqtt.settings())
        XCTAssertEqual(settings.discoveryPrefix, "ha")
        XCTAssertFalse(settings.homeAssistant)
        XCTAssertEqual(settings.keepalive, 30)
        XCTAssertEqual(settings.reconnectMax, 5)
        XCTAssertEqual(settings.outboxLimit, 100)
        XCTAssertEqual(settings.outboxMaxAge, 3600)
        XCTAssertEqual(settings.maxMessage, 2048)
        XCTAssertNotNil(settings.softwareVersion, "the version Home Assistant shows")
    }

    func testChangedMQTTSettingsWaitForTheNextStart() throws {
        var new = WatchOptions()
        try new.set("mqtt", "mqtt://127.0.0.1")
        XCTAssertEqual(WatchOptions().settingsNeedingARestart(comparedWith: new), ["mqtt"])
    }
}
