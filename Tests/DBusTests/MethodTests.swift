import DBus
import Glibc
import Loop
import TestSupport
import XCTest

final class MethodTests: BusTestCase {
    /// An object like the ones the simulator exports: methods, a read-only and a writable property, a signal.
    func exportCounter(name: String = "org.example.Counter") throws -> (count: () -> UInt32, object: ExportedObject) {
        var count: UInt32 = 5
        let interface = try ExportedInterface("org.example.Counter")
        try interface.addMethod("Echo", in: "s", out: "s") { call in [.string(try call.decode(String.self))] }
        try interface.addMethod("Add", in: "ii", out: "i") { call in
            let (a, b) = try call.decode(Int32.self, Int32.self)
            return [.int32(a &+ b)]
        }
        try interface.addMethod("Fail") { _ in
            throw DBusError.remote(name: "org.example.Error.Refused", message: "not today")
        }
        try interface.addProperty("Count", signature: "u", get: { .uint32(count) }) { value in
            count = value.uint32 ?? count
        }
        try interface.addProperty("Label", signature: "s", get: { .string("calls") })
        try interface.addSignal("Bumped", signature: "u")
        let object = ExportedObject(path: "/org/example/Counter", interfaces: [interface])
        connection.export(object)
        XCTAssertEqual(try connection.requestName(name), .primaryOwner)
        return ({ count }, object)
    }

    func testExportedMethodsAnswerGdbusAndDbusSend() throws {
        _ = try exportCounter()
        let echo = try runTool(["gdbus", "call", "--system", "-d", "org.example.Counter", "-o", "/org/example/Counter",
                                "-m", "org.example.Counter.Echo", "it's a $(test)"])
        XCTAssertEqual(echo.exit, .exited(0), echo.output)
        XCTAssertEqual(echo.output.trimmingCharacters(in: .whitespacesAndNewlines), "(\"it's a $(test)\",)")

        let add = try runTool(["dbus-send", "--system", "--print-reply", "--dest=org.example.Counter",
                               "/org/example/Counter", "org.example.Counter.Add", "int32:40", "int32:2"])
        XCTAssertEqual(add.exit, .exited(0), add.output)
        XCTAssertTrue(add.output.contains("int32 42"), add.output)
    }

    func testPropertiesAndIntrospectionFromGdbus() throws {
        let counter = try exportCounter()
        let all = try runTool(["gdbus", "call", "--system", "-d", "org.example.Counter", "-o", "/org/example/Counter",
                               "-m", "org.freedesktop.DBus.Properties.GetAll", "org.example.Counter"])
        XCTAssertEqual(all.exit, .exited(0), all.output)
        XCTAssertTrue(all.output.contains("'Count': <uint32 5>"), all.output)
        XCTAssertTrue(all.output.contains("'Label': <'calls'>"), all.output)

        let set = try runTool(["gdbus", "call", "--system", "-d", "org.example.Counter", "-o", "/org/example/Counter",
                               "-m", "org.freedesktop.DBus.Properties.Set", "org.example.Counter", "Count", "<uint32 9>"])
        XCTAssertEqual(set.exit, .exited(0), set.output)
        XCTAssertEqual(counter.count(), 9)

        let readOnly = try runTool(["gdbus", "call", "--system", "-d", "org.example.Counter", "-o", "/org/example/Counter",
                                    "-m", "org.freedesktop.DBus.Properties.Set", "org.example.Counter", "Label", "<'x'>"])
        XCTAssertNotEqual(readOnly.exit, .exited(0))
        XCTAssertTrue(readOnly.output.contains("PropertyReadOnly"), readOnly.output)

        let introspection = try runTool(["gdbus", "introspect", "--system", "-d", "org.example.Counter",
                                         "-o", "/org/example/Counter"])
        XCTAssertEqual(introspection.exit, .exited(0), introspection.output)
        for expected in ["interface org.example.Counter", "Echo(in  s arg_0,", "signal", "Bumped(u arg_0);",
                         "readwrite u Count = 9;", "readonly s Label = 'calls';"] {
            XCTAssertTrue(introspection.output.contains(expected), "missing \(expected) in\n\(introspection.output)")
        }
        let root = try runTool(["gdbus", "introspect", "--system", "-d", "org.example.Counter", "-o", "/org/example"])
        XCTAssertTrue(root.output.contains("node Counter"), root.output)
    }

    func testRemoteErrorsKeepTheirNameAndText() throws {
        _ = try exportCounter()
        let failing = try runTool(["gdbus", "call", "--system", "-d", "org.example.Counter", "-o", "/org/example/Counter",
                                   "-m", "org.example.Counter.Fail"])
        XCTAssertTrue(failing.output.contains("org.example.Error.Refused"), failing.output)
        XCTAssertTrue(failing.output.contains("not today"), failing.output)

        let badArgs = try runTool(["gdbus", "call", "--system", "-d", "org.example.Counter", "-o", "/org/example/Counter",
                                   "-m", "org.example.Counter.Add", "1"])
        XCTAssertTrue(badArgs.output.contains("InvalidArgs"), badArgs.output)
        let unknown = try runTool(["gdbus", "call", "--system", "-d", "org.example.Counter", "-o", "/nowhere",
                                   "-m", "org.example.Counter.Echo", "x"])
        XCTAssertTrue(unknown.output.contains("UnknownObject"), unknown.output)
    }

    /// A method whose work waits on something else answers when it is done, once, while the loop
    /// goes on; one whose reply is dropped unanswered is answered with an error, not left to time out.
    func testAMethodAnsweredLaterRepliesOnceAndADroppedReplyIsAnError() throws {
        let interface = try ExportedInterface("org.example.Later")
        var waiting: [MethodReply] = []
        try interface.addMethod("Wait", in: "s", out: "s", answeredLater: { call, reply in
            _ = try call.decode(String.self)
            waiting.append(reply)
        })
        try interface.addMethod("Drop", answeredLater: { _, _ in })
        connection.export(ExportedObject(path: "/org/example/Later", interfaces: [interface]))
        XCTAssertEqual(try connection.requestName("org.example.Later"), .primaryOwner)
        let client = try Connection(.address(fixture.address), loop: loop)
        defer { client.close() }

        let wait = try Message.methodCall(destination: "org.example.Later", path: "/org/example/Later",
                                          interface: "org.example.Later", member: "Wait")
        try wait.append("ring")
        var answers: [Result<Message, DBusError>] = []
        client.call(wait) { answers.append($0) }
        XCTAssertTrue(loop.run(until: { !waiting.isEmpty }, timeout: 5))
        XCTAssertTrue(answers.isEmpty, "no reply before the work is done")
        waiting[0].send([.string("rang")])
        waiting[0].send([.string("twice")])
        XCTAssertTrue(loop.run(until: { !answers.isEmpty }, timeout: 5))
        XCTAssertEqual(try answers.first?.get().decode(String.self), "rang")

        let drop = try Message.methodCall(destination: "org.example.Later", path: "/org/example/Later",
                                          interface: "org.example.Later", member: "Drop")
        var dropped: Result<Message, DBusError>?
        client.call(drop, timeout: 5) { dropped = $0 }
        XCTAssertTrue(loop.run(until: { dropped != nil }, timeout: 5))
        guard case .failure(let error)? = dropped else { return XCTFail("\(String(describing: dropped))") }
        XCTAssertEqual(error.name, "org.freedesktop.DBus.Error.Failed")
        XCTAssertTrue("\(error)".contains("dropped unanswered"), "\(error)")
        XCTAssertEqual(answers.count, 1, "answered once")
    }

    func testAsyncCallToOwnObjectAndToAMissingName() throws {
        _ = try exportCounter()
        let client = try Connection(.address(fixture.address), loop: loop)
        defer { client.close() }
        let add = try Message.methodCall(destination: "org.example.Counter", path: "/org/example/Counter",
                                         interface: "org.example.Counter", member: "Add")
        try add.append(Int32(2), Int32(3))
        var sum: Int32?
        client.call(add) { result in sum = try? result.get().decode(Int32.self) }

        let missing = try Message.methodCall(destination: "org.example.Missing", path: "/x", interface: "org.example.X",
                                             member: "Y")
        var missingError: DBusError?
        client.call(missing) { result in
            if case .failure(let error) = result { missingError = error }
        }
        waitFor("both replies") { sum != nil && missingError != nil }
        XCTAssertEqual(sum, 5)
        XCTAssertEqual(missingError?.name, "org.freedesktop.DBus.Error.ServiceUnknown")

        XCTAssertThrowsError(try client.callBlocking(missing)) { error in
            XCTAssertEqual((error as? DBusError)?.name, "org.freedesktop.DBus.Error.ServiceUnknown")
        }
    }

    func testCallThatNeverAnswersTimesOut() throws {
        // A peer that owns a name but whose loop never runs: the call reaches it and is never answered.
        let silentLoop = try EventLoop()
        let silent = try Connection(.address(fixture.address), loop: silentLoop)
        defer { silent.close() }
        XCTAssertEqual(try silent.requestName("org.example.Silent"), .primaryOwner)

        let call = try Message.methodCall(destination: "org.example.Silent", path: "/x", interface: "org.example.X",
                                          member: "Hang")
        var outcome: Result<Message, DBusError>?
        let started = monotonicNow()
        connection.call(call, timeout: 0.3) { outcome = $0 }
        waitFor("the timeout", timeout: 5) { outcome != nil }
        let elapsed = monotonicNow() - started
        guard case .failure(.timedOut) = outcome else { return XCTFail("expected a timeout, got \(String(describing: outcome))") }
        XCTAssertGreaterThanOrEqual(elapsed, 0.25)
        XCTAssertLessThan(elapsed, 3)

        XCTAssertThrowsError(try connection.callBlocking(call, timeout: 0.2)) { error in
            guard case .timedOut = error as? DBusError else { return XCTFail("\(error)") }
        }
    }

    func testEmittedSignalReachesDbusMonitorLikeTools() throws {
        _ = try exportCounter()
        let monitor = try fixture.start(["gdbus", "monitor", "--system", "-d", "org.example.Counter"])
        XCTAssertNotNil(monitor.readLine(timeout: 10) { $0.contains("Monitoring") })
        // gdbus monitor subscribes after printing its banner; emit until it reports one.
        var line: String?
        for _ in 0..<20 where line == nil {
            try connection.emit(path: "/org/example/Counter", interface: "org.example.Counter", member: "Bumped",
                                UInt32(77))
            loop.run(until: { false }, timeout: 0.05)
            line = monitor.readLine(timeout: 0.2) { $0.contains("Bumped") }
        }
        XCTAssertTrue(line?.contains("(uint32 77,)") == true, line ?? "no line")
    }

    func testUnixFDsPassBothWaysWithoutLeaks() throws {
        let interface = try ExportedInterface("org.example.Files")
        try interface.addMethod("Read", in: "h", out: "s") { call in
            let fd = try call.decode(UnixFD.self)
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(fd.rawValue, &buffer, buffer.count)
            fd.close()
            return [.string(String(decoding: buffer[..<max(count, 0)], as: UTF8.self))]
        }
        try interface.addMethod("Open", out: "h") { _ in
            var fds: [Int32] = [0, 0]
            _ = pipe(&fds)
            _ = write(fds[1], "from server", 11)
            close(fds[1])
            return [.unixFD(UnixFD(taking: fds[0]))]
        }
        connection.export(ExportedObject(path: "/org/example/Files", interfaces: [interface]))
        try connection.requestName("org.example.Files")
        let client = try Connection(.address(fixture.address), loop: loop)
        defer { client.close() }

        func roundTrip() throws -> (String?, String?) {
            var fds: [Int32] = [0, 0]
            _ = pipe(&fds)
            _ = write(fds[1], "from client", 11)
            close(fds[1])
            let readFD = UnixFD(taking: fds[0])
            let send = try Message.methodCall(destination: "org.example.Files", path: "/org/example/Files",
                                              interface: "org.example.Files", member: "Read")
            try send.append(readFD)
            readFD.close()
            var echoed: String?
            client.call(send) { echoed = try? $0.get().decode(String.self) }
            let open = try Message.methodCall(destination: "org.example.Files", path: "/org/example/Files",
                                              interface: "org.example.Files", member: "Open")
            var received: String?
            client.call(open) { result in
                guard let fd = try? result.get().decode(UnixFD.self) else { return }
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(fd.rawValue, &buffer, buffer.count)
                received = String(decoding: buffer[..<max(count, 0)], as: UTF8.self)
            }
            waitFor("both fd calls") { echoed != nil && received != nil }
            return (echoed, received)
        }
        _ = try roundTrip()  // warm-up: libdbus allocates its own descriptors lazily
        let before = openFDCount()
        for _ in 0..<20 {
            let (echoed, received) = try roundTrip()
            XCTAssertEqual(echoed, "from client")
            XCTAssertEqual(received, "from server")
        }
        XCTAssertEqual(openFDCount(), before, "every received descriptor is closed exactly once")
    }
}
