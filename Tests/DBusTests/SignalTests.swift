import DBus
import Glibc
import TestSupport
import XCTest

final class SignalTests: BusTestCase {
    func testSignalFromGdbusArrivesDecodedWithNestedVariants() throws {
        var received: [Message] = []
        connection.subscribe(MatchRule(interface: "org.example.Phone", member: "Changed")) { received.append($0) }
        let result = try runTool([
            "gdbus", "emit", "--system", "--object-path", "/org/example/Phone/1",
            "--signal", "org.example.Phone.Changed", "42", "'ringing'",
            "{'State': <int32 3>, 'Number': <'+15551234'>, 'Nested': <{'depth': <<uint64 7>>}>, 'Ok': <true>}",
        ])
        XCTAssertEqual(result.exit, .exited(0), result.output)
        waitFor("the signal") { !received.isEmpty }
        let message = try XCTUnwrap(received.first)
        XCTAssertEqual(message.path, "/org/example/Phone/1")
        XCTAssertEqual(message.interface, "org.example.Phone")
        XCTAssertEqual(message.member, "Changed")
        XCTAssertNotNil(message.sender)
        XCTAssertGreaterThan(message.serial, 0)

        let (code, word, properties) = try message.decode(Int32.self, String.self, PropertyMap.self)
        XCTAssertEqual(code, 42)
        XCTAssertEqual(word, "ringing")
        XCTAssertEqual(properties["State"]?.value.int32, 3)
        XCTAssertEqual(properties["Number"]?.value.string, "+15551234")
        XCTAssertEqual(properties["Ok"]?.value.bool, true)
        let nested = try XCTUnwrap(properties["Nested"]?.value.stringKeyedDictionary)
        XCTAssertEqual(nested["depth"], .variant(.variant(.uint64(7))))
        XCTAssertEqual(nested["depth"]?.uint64, 7, "accessors see through any number of variants")
    }

    func testSignalFromDbusSendArrivesWithEveryBasicType() throws {
        var received: [Message] = []
        connection.subscribe(MatchRule(path: "/org/example/Types", interface: "org.example.Types")) {
            received.append($0)
        }
        let result = try runTool([
            "dbus-send", "--system", "--type=signal", "/org/example/Types", "org.example.Types.All",
            "byte:7", "boolean:true", "int16:-3", "uint16:65535", "int32:-2147483648", "uint32:4294967295",
            "int64:-9000000000", "uint64:18000000000000000000", "double:2.5", "string:caller \"id\"",
            "objpath:/org/freedesktop/ModemManager1/Call/3", "array:string:a,b,c", "dict:string:int32:one,1,two,2",
            "variant:int32:9",
        ])
        XCTAssertEqual(result.exit, .exited(0), result.output)
        waitFor("the signal") { !received.isEmpty }
        let message = try XCTUnwrap(received.first)
        XCTAssertEqual(message.signature, "ybnqiuxtdsoasa{si}v")
        // Read one argument at a time: typed decoding goes to five arguments (Message.decode).
        var reader = message.reader()
        let byte = try reader.read(UInt8.self), flag = try reader.read(Bool.self)
        let small = try reader.read(Int16.self), unsignedSmall = try reader.read(UInt16.self)
        let int = try reader.read(Int32.self), unsignedInt = try reader.read(UInt32.self)
        let long = try reader.read(Int64.self), unsignedLong = try reader.read(UInt64.self)
        let real = try reader.read(Double.self), text = try reader.read(String.self)
        let path = try reader.read(ObjectPath.self), list = try reader.read([String].self)
        let table = try reader.read([String: Int32].self), variant = try reader.read(Variant.self)
        XCTAssertTrue(reader.isAtEnd)
        XCTAssertEqual(byte, 7)
        XCTAssertTrue(flag)
        XCTAssertEqual(small, -3)
        XCTAssertEqual(unsignedSmall, 65535)
        XCTAssertEqual(int, Int32.min)
        XCTAssertEqual(unsignedInt, UInt32.max)
        XCTAssertEqual(long, -9_000_000_000)
        XCTAssertEqual(unsignedLong, 18_000_000_000_000_000_000)
        XCTAssertEqual(real, 2.5)
        XCTAssertEqual(text, "caller \"id\"")
        XCTAssertEqual(path.rawValue, "/org/freedesktop/ModemManager1/Call/3")
        XCTAssertEqual(list, ["a", "b", "c"])
        XCTAssertEqual(table, ["one": 1, "two": 2])
        XCTAssertEqual(variant.value, .int32(9))
    }

    func testWrongSignatureIsATypedErrorNamingBothSignatures() throws {
        var received: [Message] = []
        connection.subscribe(MatchRule(interface: "org.example.Phone")) { received.append($0) }
        _ = try runTool(["dbus-send", "--system", "--type=signal", "/org/example/Phone", "org.example.Phone.StateChanged",
                         "int32:1", "int32:3"])
        waitFor("the signal") { !received.isEmpty }
        let message = try XCTUnwrap(received.first)
        XCTAssertThrowsError(try message.decode(Int32.self, Int32.self, UInt32.self)) { error in
            XCTAssertEqual(error as? DBusError, .signatureMismatch(expected: "iiu", actual: "ii"))
            XCTAssertEqual("\(error)", "unexpected body signature: expected 'iiu', got 'ii'")
        }
        var reader = message.reader()
        XCTAssertThrowsError(try reader.read(String.self)) { error in
            XCTAssertEqual(error as? DBusError, .typeMismatch(expected: "s", actual: "i"))
        }
    }

    func testMatchRuleRoutesOnlyMatchingSignalsAndStopsAfterCancel() throws {
        var calls: [String] = []
        var others = 0
        let subscription = connection.subscribe(
            MatchRule(interface: "org.example.Phone", member: "Ring", arguments: [0: "modem0"])
        ) { message in calls.append((try? message.decode(String.self, String.self).1) ?? "?") }
        connection.subscribe(MatchRule(interface: "org.example.Other")) { _ in others += 1 }
        for (modem, number) in [("modem1", "ignored"), ("modem0", "first")] {
            _ = try runTool(["dbus-send", "--system", "--type=signal", "/p", "org.example.Phone.Ring",
                             "string:\(modem)", "string:\(number)"])
        }
        _ = try runTool(["dbus-send", "--system", "--type=signal", "/p", "org.example.Other.Thing"])
        waitFor("both subscriptions") { calls == ["first"] && others == 1 }
        subscription.cancel()
        subscription.cancel()
        _ = try runTool(["dbus-send", "--system", "--type=signal", "/p", "org.example.Phone.Ring", "string:modem0",
                         "string:late"])
        _ = try runTool(["dbus-send", "--system", "--type=signal", "/p", "org.example.Other.Thing"])
        waitFor("the other subscription") { others == 2 }
        XCTAssertEqual(calls, ["first"], "a cancelled subscription delivers nothing")
    }

    func testMatchRuleQuotesEveryValue() {
        let rule = MatchRule(sender: "org.ofono", path: "/ril_0", interface: "org.ofono.VoiceCall",
                             member: "PropertyChanged", arguments: [0: "it's", 2: "a,b"])
        XCTAssertEqual(rule.description,
                       "type='signal',sender='org.ofono',path='/ril_0',interface='org.ofono.VoiceCall',"
                       + "member='PropertyChanged',arg0='it'\\''s',arg2='a,b'")
        XCTAssertEqual(MatchRule(type: nil, pathNamespace: "/org/freedesktop/ModemManager1").description,
                       "path_namespace='/org/freedesktop/ModemManager1'")
    }

    func testRuleWithAQuoteInAValueIsAcceptedByTheBus() throws {
        var got = false
        var warnings: [String] = []
        connection.onWarning = { warnings.append($0) }
        connection.subscribe(MatchRule(interface: "org.example.Phone", arguments: [0: "it's"])) { _ in got = true }
        _ = try runTool(["dbus-send", "--system", "--type=signal", "/p", "org.example.Phone.Name", "string:it's"])
        waitFor("the signal matched on a quoted argument") { got }
        XCTAssertEqual(warnings, [])
    }
}
