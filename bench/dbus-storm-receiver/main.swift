// The DBus layer under the storm benchmark: subscribe like a backend does (sender-verified),
// decode every StateChanged(iiu) / PropertiesChanged(sa{sv}as), count, and report.
import DBus
import Glibc
import Loop

func writeLine(_ text: String, to fd: Int32 = 1) {
    var line = text + "\n"
    line.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
}

func fail(_ text: String) -> Never {
    writeLine("dbus-storm-receiver: \(text)", to: 2)
    exit(2)
}

var address: String?
var count = 0
var withProperties = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--address": address = arguments.popFirst()
    case "--count": count = Int(arguments.popFirst() ?? "") ?? 0
    case "--with-properties": withProperties = true
    default: fail("unknown argument \(argument)")
    }
}
guard let address, count > 0 else { fail("usage: dbus-storm-receiver --address ADDR --count N [--with-properties]") }

let mmName = "org.freedesktop.ModemManager1"
do {
    let loop = try EventLoop()
    let connection = try Connection(.address(address), loop: loop)
    let owner = try connection.watchName(mmName) { _ in }
    var received = 0
    var rejected = 0
    var stateSum: Int64 = 0
    var first = 0.0
    var last = 0.0

    func counted() {
        if received == 0 { first = monotonicNow() }
        received += 1
        if received == count {
            last = monotonicNow()
            loop.stop()
        }
    }

    connection.subscribe(
        MatchRule(sender: mmName, interface: "org.freedesktop.ModemManager1.Call", member: "StateChanged"),
        owner: owner, onRejected: { _ in rejected += 1 }
    ) { message in
        guard let (_, new, _) = try? message.decode(Int32.self, Int32.self, UInt32.self) else { return }
        stateSum += Int64(new)
        counted()
    }
    if withProperties {
        connection.subscribe(
            MatchRule(sender: mmName, pathNamespace: "/org/freedesktop/ModemManager1",
                      interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
            owner: owner, onRejected: { _ in rejected += 1 }
        ) { message in
            guard let (_, changed, _) = try? message.decode(String.self, PropertyMap.self, [String].self) else { return }
            stateSum += Int64(changed["State"]?.value.int32 ?? 0)
            counted()
        }
    }
    // The bus handles our messages in order: once this answers, the match rules are in place.
    _ = try connection.callBlocking(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                    interface: "org.freedesktop.DBus", member: "GetId")
    loop.run(until: { owner.isResolved }, timeout: 10)
    writeLine("ready")
    loop.run()
    writeLine("done \(received) \(last - first)")
    if rejected > 0 { writeLine("dbus-storm-receiver: \(rejected) signals from a non-owner rejected", to: 2) }
    connection.close()
} catch {
    fail("\(error)")
}
