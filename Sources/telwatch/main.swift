// telwatch: the command. For now it reports its version and which buses it can reach;
// the watch pipeline, status, doctor and the built-in demo come with the command itself.
import DBus
import Glibc

let version = "0.1.0"

func writeLine(_ text: String, to fd: Int32 = 1) {
    var line = text + "\n"
    line.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
}

let usage = """
usage: telwatch [--version | --help | buses]

  buses      list the D-Bus buses telwatch can reach and which telephony services own names there
  --version  print the version
"""

/// One line per bus: reachable or not, and who owns the names telwatch cares about.
func listBuses() -> Int32 {
    let watched = ["org.freedesktop.ModemManager1", "org.ofono", "org.freedesktop.login1"]
    var reachable = 0
    for bus in [BusAddress.system, .session] {
        do {
            let loop = try EventLoop()
            let connection = try Connection(bus, loop: loop)
            defer { connection.close() }
            reachable += 1
            var owners: [String] = []
            for name in watched {
                let query = try Message.methodCall(destination: BusDaemon.name, path: BusDaemon.path,
                                                   interface: BusDaemon.interface, member: "NameHasOwner")
                try query.append(name)
                let owned = (try? connection.callBlocking(query, timeout: 5).decode(Bool.self)) ?? false
                owners.append("\(name) \(owned ? "running" : "absent")")
            }
            writeLine("✔ \(bus) bus: reachable as \(connection.uniqueName); " + owners.joined(separator: ", "))
        } catch {
            writeLine("✘ \(bus) bus: \(error)")
        }
    }
    return reachable > 0 ? 0 : 1
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--version": writeLine("telwatch \(version)")
case "--help", "-h": writeLine(usage)
case "buses": exit(listBuses())
case nil: writeLine(usage)
case let other?:
    writeLine("telwatch: unknown argument '\(other)' (see telwatch --help)", to: 2)
    exit(2)
}
