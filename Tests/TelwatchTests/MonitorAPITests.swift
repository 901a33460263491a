import DBus
import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// telwatch's own D-Bus API (docs/dbus-api.md), as a client on the same private bus sees it,
/// with the project's fake ModemManager.
final class MonitorAPITests: CommandTestCase {
    static let busName = "io.telwatch.Monitor1"
    static let root = "/io/telwatch/Monitor1"
    static let interface = "io.telwatch.Monitor1"
    static let callInterface = "io.telwatch.Call1"

    /// A client of the API in this process: it subscribes and keeps every signal of the service
    /// in the order the bus delivered them.
    final class Client {
        let connection: Connection
        private(set) var signals: [Message] = []
        private var subscriptions: [Subscription] = []

        init(_ harness: LogindHarness, subscribe: Bool = true) throws {
            connection = try Connection(.address(harness.fixture.address), loop: harness.loop)
            for (interface, member) in [(MonitorAPITests.interface, "Event"),
                                        (BusDaemon.objectManagerInterface, "InterfacesAdded"),
                                        (BusDaemon.objectManagerInterface, "InterfacesRemoved"),
                                        (BusDaemon.propertiesInterface, "PropertiesChanged")] {
                subscriptions.append(connection.subscribe(MatchRule(
                    sender: MonitorAPITests.busName, interface: interface, member: member)) { [unowned self] message in
                    self.signals.append(message)
                })
            }
            if subscribe { try call(MonitorAPITests.root, MonitorAPITests.interface, "Subscribe") }
        }

        /// Every signal the service sent before it answered this call has been handled here: the bus
        /// keeps the order of one sender's messages to one receiver.
        func settle(_ harness: LogindHarness) throws {
            var answered = false
            let message = try Message.methodCall(destination: MonitorAPITests.busName, path: try ObjectPath(MonitorAPITests.root),
                                                 interface: BusDaemon.propertiesInterface, member: "Get")
            try message.append(MonitorAPITests.interface, "LiveCalls")
            connection.call(message) { _ in answered = true }
            XCTAssertTrue(harness.run(until: { answered }))
        }

        @discardableResult
        func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) throws
            -> [DBusValue] {
            try connection.callValues(MonitorAPITests.busName, path, interface, member, arguments, timeout: 10)
        }

        /// `(event name, fields in order)` of each Event signal so far.
        var events: [(name: String, fields: [(key: String, value: DBusValue)])] {
            signals.filter { $0.member == "Event" }.compactMap(Client.event)
        }

        static func event(_ message: Message) -> (name: String, fields: [(key: String, value: DBusValue)])? {
            guard let values = try? message.values(), values.count == 2, let name = values[0].string,
                  case .dictionary(_, _, let entries) = values[1] else { return nil }
            return (name, entries.map { ($0.key.string ?? "", $0.value.unwrapped) })
        }

        func close() {
            for subscription in subscriptions { subscription.cancel() }
            connection.close()
        }
    }

    private func introspect(_ path: String) throws -> String {
        try XCTUnwrap(logind.observer.callValues(Self.busName, path, BusDaemon.introspectableInterface, "Introspect",
                                                 timeout: 10).first?.string)
    }

    func testTheTreeShowsInGdbusAndBusctlAndIntrospectionIsTheShippedXML() throws {
        try startModemManager()
        let watch = try startWatch()
        let shipped = try XCTUnwrap(Files.text(Repository.path("dist/dbus-1/interfaces/io.telwatch.Monitor1.xml")))
        XCTAssertEqual(try introspect(Self.root), shipped, "dist/dbus-1/interfaces/io.telwatch.Monitor1.xml is stale")

        let client = try Client(logind)
        defer { client.close() }
        _ = try ring("+15551234")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertTrue(logind.run(until: { client.events.contains { $0.name == "incoming" } }))
        let path = try XCTUnwrap(client.signals.first { $0.member == "InterfacesAdded" }
            .flatMap { try? $0.values().first?.objectPath?.rawValue })
        let shippedCall = try XCTUnwrap(Files.text(Repository.path("dist/dbus-1/interfaces/io.telwatch.Call1.xml")))
        XCTAssertEqual(try introspect(path), shippedCall, "dist/dbus-1/interfaces/io.telwatch.Call1.xml is stale")

        let gdbus = try fixture.run(["gdbus", "introspect", "--address", fixture.address, "--dest", Self.busName,
                                     "--object-path", "/", "--recurse"])
        XCTAssertEqual(gdbus.status, .exited(0), gdbus.log)
        for expected in ["node /io/telwatch/Monitor1 {", "interface io.telwatch.Monitor1 {", "Subscribe();",
                         "Event(s event,", "readonly u LiveCalls = 1;", "interface io.telwatch.Call1 {",
                         "readonly s Number = '+15551234';", "readonly s Detail = 'ringing';", "node " + path + " {"] {
            XCTAssertTrue(gdbus.output.contains(expected), "\(expected) not in:\n\(gdbus.output)")
        }
        guard access("/usr/bin/busctl", X_OK) == 0 else { return print("busctl is not installed: its look is skipped") }
        let busctl = try fixture.run(["busctl", "--address=" + fixture.address, "tree", Self.busName])
        XCTAssertEqual(busctl.status, .exited(0), busctl.log)
        XCTAssertTrue(busctl.output.contains(path), busctl.output)
    }

    func testACallIsAnObjectBetweenItsFirstLineAndItsDisconnectedAndEventsAreTheJSONLines() throws {
        try startModemManager()
        let watch = try startWatch()
        let client = try Client(logind)
        defer { client.close() }
        var lines: [[String: Any]] = []
        let call = try ring("+15551234")
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming", seen: &lines))
        try mm(call, "org.freedesktop.ModemManager1.Call", "Accept")
        XCTAssertNotNil(nextEvent(watch, "connected", seen: &lines))
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        XCTAssertNotNil(nextEvent(watch, "run-stopped", seen: &lines))
        XCTAssertTrue(logind.run(until: { client.events.contains { $0.name == "run-stopped" } }), watch.log())

        // The object comes before the call's first Event and goes after its disconnected Event.
        let order = client.signals.compactMap { message -> String? in
            message.member == "Event" ? Client.event(message)?.name : message.member == "PropertiesChanged" ? nil : message.member
        }
        let added = try XCTUnwrap(order.firstIndex(of: "InterfacesAdded"), "\(order)")
        let removed = try XCTUnwrap(order.firstIndex(of: "InterfacesRemoved"), "\(order)")
        XCTAssertLessThan(added, try XCTUnwrap(order.firstIndex(of: "incoming")), "\(order)")
        XCTAssertGreaterThan(removed, try XCTUnwrap(order.firstIndex(of: "disconnected")), "\(order)")
        // Answered: the call's properties changed (announced before its connected Event), and LiveCalls.
        let changes = client.signals.filter { $0.member == "PropertiesChanged" }
        let callChange = try XCTUnwrap(changes.first { $0.path?.contains("/Call/") == true })
        let changed = try XCTUnwrap(callChange.values()[1].stringKeyedDictionary)
        XCTAssertEqual(changed["State"]?.string, "connected")
        XCTAssertEqual(changed["Detail"]?.string, "active")
        XCTAssertNotEqual(changed["ConnectedAt"]?.uint64, 0)
        XCTAssertNil(changed["Number"], "only what changed")
        XCTAssertLessThan(try XCTUnwrap(client.signals.firstIndex { $0 === callChange }),
                          try XCTUnwrap(client.signals.firstIndex { Client.event($0)?.name == "connected" }))
        XCTAssertTrue(changes.contains { message in
            message.path == Self.root && (try? message.values()[1].stringKeyedDictionary?["LiveCalls"]?.uint32) == 0
        }, "LiveCalls back to 0")

        // Its properties are the incoming line's.
        let announcement = try XCTUnwrap(client.signals.first { $0.member == "InterfacesAdded" }).values()
        let id = try XCTUnwrap(incoming["call_id"] as? String)
        XCTAssertEqual(announcement.first?.objectPath?.rawValue,
                       Self.root + "/Call/" + id.replacingOccurrences(of: "-", with: ""))
        let properties = try XCTUnwrap(announcement.last?.stringKeyedDictionary?[Self.callInterface]?
            .stringKeyedDictionary)
        XCTAssertEqual(properties["Id"]?.string, id)
        XCTAssertEqual(properties["State"]?.string, "incoming")
        XCTAssertEqual(properties["Detail"]?.string, "ringing")
        XCTAssertEqual(properties["Direction"]?.string, "incoming")
        XCTAssertEqual(properties["Number"]?.string, "+15551234")
        XCTAssertEqual(properties["StackPath"]?.string, call)
        XCTAssertEqual(properties["Modem"]?.string, Self.modem0)
        XCTAssertEqual(properties["ConnectedAt"]?.uint64, 0)
        let firstSeen = try XCTUnwrap(properties["FirstSeen"]?.uint64)
        XCTAssertEqual(Self.rfc3339(microseconds: firstSeen), incoming["first_seen"] as? String)
        let objects = try client.call(Self.root, BusDaemon.objectManagerInterface, "GetManagedObjects")
        XCTAssertEqual(objects.first?.stringKeyedDictionary?.count ?? objects.first?.array?.count, 0,
                       "no call object is left once the call ended")

        // One Event per JSON line (those after the client subscribed), same names, keys and values.
        let events = client.events
        let tail = Array(lines.drop { $0["event"] as? String != "run-started" })
        XCTAssertEqual(events.map(\.name), tail.compactMap { $0["event"] as? String })
        for (event, line) in zip(events, tail) {
            XCTAssertEqual(event.fields.map(\.key).sorted(), line.keys.sorted(), event.name)
            for (key, value) in event.fields {
                switch value {
                case .string(let text): XCTAssertEqual(line[key] as? String, text, "\(event.name).\(key)")
                case .bool(let flag): XCTAssertEqual(line[key] as? Bool, flag, "\(event.name).\(key)")
                case .int64(let count): XCTAssertEqual(line[key] as? Int, Int(count), "\(event.name).\(key)")
                case .double(let seconds):
                    XCTAssertEqual(try XCTUnwrap(line[key] as? Double), seconds, accuracy: 0.0005, "\(event.name).\(key)")
                case .uint64(let microseconds):
                    XCTAssertEqual(line[key] as? String, Self.rfc3339(microseconds: microseconds), "\(event.name).\(key)")
                case .array(_, let items):
                    XCTAssertTrue(items.isEmpty && line[key] is NSNull, "\(event.name).\(key) is null in the line")
                default: XCTFail("\(event.name).\(key): unexpected type \(value)")
                }
            }
        }
        // One moment per event: the clock is read once, so the ring's `time` is its `first_seen`
        // to the microsecond (the API carries both as microseconds).
        let ring = try XCTUnwrap(events.first { $0.name == "incoming" })
        let time = try XCTUnwrap(ring.fields.first { $0.key == "time" }?.value.uint64)
        XCTAssertEqual(ring.fields.first { $0.key == "first_seen" }?.value.uint64, time)
    }

    func testSignalsGoOutOnlyWhileASubscriberIsOnTheBus() throws {
        try startModemManager()
        let watch = try startWatch()
        let listener = try Client(logind, subscribe: false)
        defer { listener.close() }
        let leaving = try Client(logind)
        let gone = leaving.connection.uniqueName
        leaving.close()  // subscribed, then gone from the bus without Unsubscribe
        // Once the bus says it left, the service has that news before anything the ring causes.
        var left = false
        let owner = try listener.connection.watchName(gone) { event in
            if case .appeared = event {} else { left = true }
        }
        defer { owner.cancel() }
        XCTAssertTrue(logind.run(until: { left }))
        let call = try ring("+15551234")
        var seen: [[String: Any]] = []
        XCTAssertNotNil(nextEvent(watch, "incoming", seen: &seen))
        if !seen.contains(where: { $0["event"] as? String == "lock-taken" }) {
            XCTAssertNotNil(nextEvent(watch, "lock-taken"), "the last event of the ring")
        }
        try listener.settle(logind)
        XCTAssertEqual(listener.signals.count, 0, "nobody subscribed: no signal at all")

        try listener.call(Self.root, Self.interface, "Subscribe")
        try mm(call, "org.freedesktop.ModemManager1.Call", "Accept")
        XCTAssertNotNil(nextEvent(watch, "connected"))
        try listener.settle(logind)
        XCTAssertEqual(listener.events.map(\.name), ["connected"])
        try listener.call(Self.root, Self.interface, "Unsubscribe")
        try control("RemoteHangup", [.objectPath(try ObjectPath(call))])
        XCTAssertNotNil(nextEvent(watch, "run-stopped"))
        try listener.settle(logind)
        XCTAssertEqual(listener.events.map(\.name), ["connected"], "nothing after Unsubscribe")
    }

    func testRedactedNumbersAreRedactedInTheAPIToo() throws {
        try startModemManager()
        let watch = try startWatch(["--redact-numbers"])
        let client = try Client(logind)
        defer { client.close() }
        let hostile = "'; rm -rf ~ #\u{1B}[31m\n\"x\"123"
        _ = try ring(hostile)
        let line = try XCTUnwrap(nextEvent(watch, "incoming"))
        let redacted = try XCTUnwrap(line["number"] as? String)
        XCTAssertTrue(redacted.hasPrefix("****") && redacted.hasSuffix("23"), redacted)
        XCTAssertTrue(logind.run(until: { client.events.contains { $0.name == "incoming" } }))
        let event = try XCTUnwrap(client.events.first { $0.name == "incoming" })
        XCTAssertEqual(event.fields.first { $0.key == "number" }?.value.string, redacted)
        let path = try XCTUnwrap(client.signals.first { $0.member == "InterfacesAdded" }
            .flatMap { try? $0.values().first?.objectPath?.rawValue })
        let number = try client.call(path, BusDaemon.propertiesInterface, "Get",
                                     [.string(Self.callInterface), .string("Number")])
        XCTAssertEqual(number.first?.string, redacted)
        let ownNumber = try client.call(path, BusDaemon.propertiesInterface, "Get",
                                        [.string(Self.callInterface), .string("ModemNumber")])
        XCTAssertEqual(ownNumber.first?.string, "**********00", "the modem's own number is redacted too")
        XCTAssertEqual(line["modem_number"] as? String, "**********00")
    }

    func testStatusAsksTheServiceAndTellsItsIDsAndDurations() throws {
        try startModemManager()
        let watch = try startWatch()
        let call = try ring("+15557777")
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"))
        try mm(call, "org.freedesktop.ModemManager1.Call", "Accept")
        let connected = try XCTUnwrap(nextEvent(watch, "connected"))

        let json = try runToEnd(["status", "--json", "--bus", fixture.address, "--backend", "modemmanager"])
        XCTAssertEqual(json.status, .exited(0), json.errors)
        let object = try XCTUnwrap(JSONLine.object(json.output.trimmingCharacters(in: .whitespacesAndNewlines)),
                                   json.output)
        XCTAssertEqual((object["service"] as? [String: Any])?["pid"] as? Int, Int(watch.pid))
        let listed = try XCTUnwrap((object["calls"] as? [[String: Any]])?.first)
        XCTAssertEqual(listed["call_id"] as? String, incoming["call_id"] as? String, "the service's id, not a new one")
        XCTAssertEqual(listed["first_seen"] as? String, incoming["first_seen"] as? String)
        XCTAssertEqual(listed["connected_at"] as? String, connected["connected_at"] as? String)
        for key in ["modem_id", "modem_number", "operator"] {
            XCTAssertNotNil(incoming[key] as? String, key)
            XCTAssertEqual(listed[key] as? String, incoming[key] as? String, "the modem's identity, from the call's object")
        }
        let run = try XCTUnwrap(object["run"] as? [String: Any])
        XCTAssertEqual(run["pid"] as? Int, Int(watch.pid))
        XCTAssertEqual(run["holders"] as? Int, 1)

        let text = try runToEnd(["status", "--bus", fixture.address])
        XCTAssertTrue(text.output.contains("service: telwatch"), text.output)
        let id = try XCTUnwrap(incoming["call_id"] as? String)
        XCTAssertTrue(text.output.contains("\(id.prefix(8))  connected (active)"), text.output)

        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
        let none = try runToEnd(["status", "--bus", fixture.address, "--backend", "modemmanager",
                                 "--state-dir", stateDirectory])
        XCTAssertEqual(none.status, .exited(0), none.errors)
        XCTAssertTrue(none.output.hasPrefix("service: no telwatch runs"), none.output)
        XCTAssertTrue(none.output.contains("run: none"), none.output)
    }

    func testEventsJSONIsTheServiceOwnJSONForAWholeScenarioAndEndsWithTheService() throws {
        let modemManager = try startModemManager()
        let watch = try startWatch()
        let events = try telwatch(["events", "--json", "--verbose", "--bus", fixture.address])
        let text = try telwatch(["events", "--verbose", "--bus", fixture.address])
        for follower in [events, text] {
            XCTAssertTrue(waitForStderr(follower, "following the telwatch service"), follower.log())
        }
        var serviceLines: [String] = []
        func serviceUntil(_ event: String) {
            while let line = watch.readLine(timeout: 10) {
                serviceLines.append(line)
                if line.contains("\"event\":\"\(event)\"") || line.contains("\"status\":\"\(event)\"") { return }
            }
            XCTFail("no \(event) line:\n\(serviceLines.joined(separator: "\n"))\n\(watch.log())")
        }
        // Answered, a second call waiting, held, resumed; a missed call; the stack restarted mid-call.
        let first = try ring("+15550001")
        serviceUntil("incoming")
        try mm(first, "org.freedesktop.ModemManager1.Call", "Accept")
        serviceUntil("connected")
        let second = try control("Wait", [.objectPath(try ObjectPath(Self.modem0)), .string("+15550002")])
            .first?.objectPath?.rawValue ?? ""
        serviceUntil("incoming")
        try setState(first, .held, reason: .accepted)
        serviceUntil("connected")
        try setState(first, .active, reason: .accepted)
        serviceUntil("connected")
        try control("RemoteHangup", [.objectPath(try ObjectPath(second))])
        serviceUntil("missed")
        modemManager.terminate()
        serviceUntil("run-stopped")
        try startModemManager()
        serviceUntil("synced")
        watch.signal(SIGUSR1)
        serviceUntil("stats")

        var followed: [String] = []
        while followed.count < serviceLines.count, let line = events.readLine(timeout: 10) { followed.append(line) }
        XCTAssertEqual(followed, serviceLines)

        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
        XCTAssertNotNil(events.readLine(timeout: 10) { $0.contains("\"event\":\"exit\"") }, "the exit line too")
        XCTAssertEqual(events.wait(timeout: 10), .exited(3), "the service gone: exit status 3")
        XCTAssertTrue(events.log().contains("the telwatch service stopped"), events.log())

        let shown = text.readToEnd(timeout: 10)
        for expected in ["incoming     ", "+15550001", "waiting ", "held     ", "missed       ", "run-started",
                         "modemmanager stopped"] {
            XCTAssertTrue(shown.contains(expected), "\(expected) not in the text stream:\n\(shown)")
        }
        XCTAssertEqual(text.wait(timeout: 10), .exited(3))

        let absent = try runToEnd(["events", "--bus", fixture.address], timeout: 10)
        XCTAssertEqual(absent.status, .exited(3))
        XCTAssertTrue(absent.errors.contains("no telwatch service is running"), absent.errors)
    }

    func testASecondServiceRefusesCleanlyUnlessItHasNoAPI() throws {
        let first = try startWatch(backend: "ofono")
        let second = try runToEnd(["--bus", fixture.address, "--backend", "ofono", "--json",
                                   "--state-dir", stateDirectory + "2"])
        XCTAssertEqual(second.status, .exited(5), second.errors)
        XCTAssertEqual(second.output, "", "it stopped before following anything")
        XCTAssertTrue(second.errors.contains("another telwatch (pid \(first.pid)) owns io.telwatch.Monitor1"),
                      second.errors)
        XCTAssertTrue(second.errors.contains("--no-api"), second.errors)
        XCTAssertEqual(second.errors.split(separator: "\n").count, 1, second.errors)

        let quiet = try startWatch(["--no-api", "--state-dir", stateDirectory + "3"], backend: "ofono")
        XCTAssertTrue(quiet.isRunning)
        quiet.signal(SIGTERM)
        XCTAssertEqual(quiet.wait(timeout: 10), .exited(0))
    }

    func testTheShippedPolicyRefusesAnotherUserOutsideTheGroup() throws {
        guard getuid() == 0 else {
            throw XCTSkip("needs root: the client is started as the user nobody with setpriv --reuid")
        }
        let bus = try BusFixture(config: Repository.path("Tests/Fixtures/bus-api-policy.conf"), openToOtherUsers: true)
        defer { bus.stop() }
        let watch = try bus.start([Self.telwatch, "--bus", bus.address, "--json", "--backend", "ofono",
                                   "--inhibit", "none", "--state-dir", bus.directory + "/state"])
        XCTAssertNotNil(watch.readLine(timeout: 15) { $0.contains("\"event\":\"ready\"") }, watch.log())
        let subscribe = ["gdbus", "call", "--address", bus.address, "--dest", Self.busName, "--object-path", Self.root,
                         "--method", Self.interface + ".Subscribe"]
        let asRoot = try bus.run(subscribe)
        XCTAssertEqual(asRoot.status, .exited(0), "root may: \(asRoot.log)")
        let asNobody = try bus.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + subscribe)
        XCTAssertNotEqual(asNobody.status, .exited(0), asNobody.output)
        XCTAssertTrue(asNobody.log.contains("AccessDenied"), asNobody.log)
        let read = try bus.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "gdbus", "call",
                                "--address", bus.address, "--dest", Self.busName, "--object-path", Self.root,
                                "--method", "org.freedesktop.DBus.Properties.GetAll", Self.interface])
        XCTAssertTrue(read.log.contains("AccessDenied"), "nor read a property: \(read.log)")
    }

    /// Waits (bounded, woken by inotify) until the process's stderr contains `text`.
    private func waitForStderr(_ process: TestProcess, _ text: String, timeout: Double = 10) -> Bool {
        guard let path = process.logPath else { return false }
        return Files.waitUntil(path, timeout: timeout) { process.log().contains(text) }
    }

    /// The JSON line's text of a moment the API gives in microseconds.
    static func rfc3339(microseconds: UInt64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        let milliseconds = microseconds / 1000
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
