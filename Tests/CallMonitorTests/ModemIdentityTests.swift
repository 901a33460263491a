import DBus
import Glibc
import TestSupport
import XCTest
@testable import CallMonitor

/// Each stack's word on what a modem is, against the project's fakes on a private bus: a call
/// says which modem it is on by identity, not only by a path that changes when a modem resets.
final class ModemIdentityTests: MonitorTestCase {
    let mmModem0 = "/org/freedesktop/ModemManager1/Modem/0"
    let ofonoModem = "/phonesim"
    let modemInterface = "org.freedesktop.ModemManager1.Modem"
    let modem3gppInterface = "org.freedesktop.ModemManager1.Modem.Modem3gpp"

    /// What the fake ModemManager's modem N is.
    private func mmIdentity(_ index: Int, operatorName: String = "Telwatch Mobile") -> ModemIdentity {
        ModemIdentity(equipmentID: "35693800000000\(index)", ownNumber: "+1555010000\(index)",
                      operatorName: operatorName)
    }

    /// `PropertiesChanged(interface, changed, [])` from the fake's own connection, any values.
    private func emitModemProperties(_ modem: String, _ interface: String, _ changed: [String: Variant]) throws {
        _ = try control.callBlocking(
            destination: ModemManagerBus.service, path: try ObjectPath(modem), interface: Self.mockInterface,
            member: "EmitSignal", "org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as",
            [Variant(interface), Variant(changed), Variant([String]())])
    }

    func testModemManagerCallsCarryTheModemsIdentityFromTheSync() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        let call = try mockPath(.modemManager, "Ring", try ObjectPath(mmModem0), "+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234' reason=incoming-new", "busy A"])
        XCTAssertEqual(self.call("A")?.modemIdentity, mmIdentity(0))

        // Roaming onto another network, a SIM that learns its number: the call's next events say so.
        try mock(.modemManager, "SetOperator", try ObjectPath(mmModem0), "Other Net")
        try mock(.modemManager, "SetOwnNumbers", try ObjectPath(mmModem0), ["+15550199999", "+15550188888"])
        expectNothingMore()
        try mock(.modemManager, "RemoteHangup", try ObjectPath(call))
        expect(["A incoming -> disconnected incoming '+15551234' reason=terminated", "A missed", "idle A"])
        XCTAssertEqual(self.call("A")?.modemIdentity,
                       ModemIdentity(equipmentID: "356938000000000", ownNumber: "+15550199999",
                                     operatorName: "Other Net"))
        XCTAssertEqual(malformedNotices, [])
    }

    func testAModemResetOnANewPathIsTheSameModemByItsIdentity() throws {
        try startMock(.modemManager, #"{"modems": 0}"#)
        try startMonitor(.modemManager)
        let first = try mockPath(.modemManager, "AddModem", "wwan")
        _ = try mockPath(.modemManager, "Ring", try ObjectPath(first), "+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234' reason=incoming-new", "busy A"])
        XCTAssertEqual(self.call("A")?.modemIdentity, mmIdentity(0))

        // The modem goes: its call's last events still name it.
        try mock(.modemManager, "RemoveModem", try ObjectPath(first))
        expect(["A incoming -> disconnected incoming '+15551234' reason=modem-removed", "A missed", "idle A"])
        XCTAssertEqual(self.call("A")?.modemIdentity, mmIdentity(0))

        // Back on a new path (the fake numbers its modems on, as the daemon does).
        let second = try mockPath(.modemManager, "AddModem", "wwan")
        XCTAssertNotEqual(second, first)
        _ = try mockPath(.modemManager, "Ring", try ObjectPath(second), "+15559876")
        expect(["B new -> incoming.ringing incoming '+15559876' reason=incoming-new", "busy B"])
        XCTAssertEqual(self.call("B")?.modem.eventValue, second)
        XCTAssertEqual(self.call("B")?.modemIdentity, mmIdentity(1))
    }

    func testHostileModemPropertiesAreClippedOrSkipped() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        _ = try mockPath(.modemManager, "Ring", try ObjectPath(mmModem0), "+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234' reason=incoming-new", "busy A"])
        let long = String(repeating: "é", count: 200)
        try emitModemProperties(mmModem0, modem3gppInterface, ["OperatorName": Variant(long)])
        try emitModemProperties(mmModem0, modemInterface, ["EquipmentIdentifier": Variant(Int32(7)),
                                                           "OwnNumbers": Variant("+1555")])
        settle()
        let identity = try XCTUnwrap(monitor.liveCalls.first?.modemIdentity)
        XCTAssertEqual(identity.operatorName, String(repeating: "é", count: ModemIdentity.maxBytes / 2))
        XCTAssertEqual(identity.equipmentID, "356938000000000", "a wrong type keeps the old value")
        XCTAssertEqual(identity.ownNumber, "+15550100000")
        let problems = malformedNotices.map(\.description)
        XCTAssertTrue(problems.contains { $0.contains("modem \(mmModem0): EquipmentIdentifier is not a string") },
                      "\(problems)")
        XCTAssertTrue(problems.contains { $0.contains("OwnNumbers is not a list of strings") }, "\(problems)")
        expectNothingMore()
    }

    func testOfonoCallsCarryTheModemsSerial() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        _ = try mockPath(.ofono, "Ring", try ObjectPath(ofonoModem), "+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234'", "busy A"])
        // oFono's modem object has the IMEI only: operator and own number are left unknown.
        XCTAssertEqual(self.call("A")?.modemIdentity, ModemIdentity(equipmentID: "356938000000000"))

        // A modem powered later reads its serial then and says so.
        try mock(.ofono, "SetSerial", try ObjectPath(ofonoModem), "356938009999999")
        settle()
        XCTAssertEqual(monitor.liveCalls.first?.modemIdentity, ModemIdentity(equipmentID: "356938009999999"))

        let hotplugged = try mockPath(.ofono, "AddModem", "usb")
        _ = try mockPath(.ofono, "Ring", try ObjectPath(hotplugged), "+15559876")
        expect(["B new -> incoming.ringing incoming '+15559876'"])
        XCTAssertEqual(self.call("B")?.modemIdentity, ModemIdentity(equipmentID: "356938000000001"))
        XCTAssertEqual(malformedNotices, [])
    }

    // MARK: Emergency numbers (docs/screening.md)

    private func emergencyNumbers(_ kind: BackendKind, _ modem: String) -> [[String]] {
        notices.compactMap { notice in
            guard case .emergencyNumbers(kind, modem, let numbers) = notice else { return nil }
            return numbers
        }
    }

    func testModemManagerReadsTheSIMsEmergencyNumbersInTheSyncKeepingDigitsOnly() throws {
        try startMock(.modemManager, #"{"sim_emergency_numbers": ["112", "911", "1\u001b2", "1234567", "", "118"]}"#)
        try startMonitor(.modemManager)
        XCTAssertEqual(emergencyNumbers(.modemManager, mmModem0), [["112", "911", "118"]], "known once synced")
        XCTAssertEqual(notices.last, .synced(.modemManager, modems: 1, calls: 0))
        // A modem that comes later: its SIM is read when it appears.
        let second = try mockPath(.modemManager, "AddModem", "wwan")
        waitForNotice("the new modem's SIM") { $0 == .emergencyNumbers(.modemManager, modem: second, ["112", "911", "118"]) }
        XCTAssertEqual(malformedNotices, [])
    }

    func testModemManagerWithoutASIMListsNothing() throws {
        try startMock(.modemManager)
        try startMonitor(.modemManager)
        _ = try mockPath(.modemManager, "Ring", try ObjectPath(mmModem0), "+15551234")
        expect(["A new -> incoming.ringing incoming '+15551234' reason=incoming-new", "busy A"])
        XCTAssertEqual(emergencyNumbers(.modemManager, mmModem0), [])
    }

    func testOfonoReadsTheVoiceCallManagersEmergencyNumbersInTheSync() throws {
        try startMock(.ofono)
        try startMonitor(.ofono)
        XCTAssertEqual(emergencyNumbers(.ofono, ofonoModem), [["08", "000", "110", "112", "118", "119", "911", "999"]])
        XCTAssertEqual(notices.last, .synced(.ofono, modems: 1, calls: 0))
    }
}
