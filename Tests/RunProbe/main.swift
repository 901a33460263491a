// telwatch-run-probe: a process that holds one background run (logind lock and run record)
// until it is killed, so that a test can SIGKILL a real lock holder and check what the kernel
// and the next telwatch do about it. Prints one line per run event.
//
// usage: telwatch-run-probe STATE_DIRECTORY [WAKELOCK_DIRECTORY]   (bus: DBUS_SYSTEM_BUS_ADDRESS)
import BGRunManager
import DBus
import Glibc
import Loop

func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

func holdRun(_ arguments: [String]) throws {
    let loop = try EventLoop()
    let bus = try Connection(.system, loop: loop)
    var configuration = RunConfiguration(stateDirectory: arguments[1])
    if arguments.count > 2 {
        configuration.wakelock = KernelWakelock(name: "telwatch-run-probe", directory: arguments[2])
    }
    // A run command, to show it does not outlive a killed telwatch; with PROBE_STUBBORN=1 one that
    // ignores the SIGTERM its parent's death sends, which only the next start can stop.
    let stubborn = getenv("PROBE_STUBBORN").map { String(cString: $0) } == "1"
    // PROBE_MARKER names the command (an extra, zero-length sleep) so a test can find it in /proc.
    let marker = getenv("PROBE_MARKER").map { String(cString: $0) } ?? "0"
    // A stubborn command touches PROBE_READY once its trap is set: until then SIGTERM still kills it.
    let ready = getenv("PROBE_READY").map { String(cString: $0) } ?? "/dev/null"
    configuration.command = stubborn ? ["sh", "-c", "trap '' TERM; : >\"$0\"; exec sleep 300", ready]
                                     : ["sleep", "300", marker]
    configuration.commandGrace = 0.3
    let manager = try BGRunManager(loop: loop, lockBus: bus, configuration: configuration) { event in
        say(([event.name] + event.fields.map { "\($0.key)=\($0.value)" }).joined(separator: " "))
    }
    manager.join("probe", reason: "probe")
    loop.run()
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    say("usage: telwatch-run-probe STATE_DIRECTORY [WAKELOCK_DIRECTORY]")
    exit(2)
}
do {
    try holdRun(arguments)
} catch {
    say("error \(error)")
    exit(1)
}
