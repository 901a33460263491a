import CallMonitor
import DBus
import Foundation
import Glibc
import Loop
import TestSupport

/// The test's own connection to the private bus: blocking method calls, and bounded waits that
/// run the loop until signals have made a condition true.
final class BusClient {
    let fixture: BusFixture
    let loop: EventLoop
    let connection: Connection

    init(fixture: BusFixture, loop: EventLoop, connection: Connection) {
        self.fixture = fixture
        self.loop = loop
        self.connection = connection
    }

    /// Calls a method and returns the reply's body; an error reply is thrown.
    @discardableResult
    func call(_ service: String, _ path: String, _ interface: String, _ member: String,
              _ arguments: [DBusValue] = [], timeout: Double = 15) throws -> [DBusValue] {
        try connection.callValues(service, path, interface, member, arguments, timeout: timeout)
    }

    /// Runs the loop until `condition` holds; after `timeout`, throws an error naming `what`.
    func wait(_ what: String, timeout: Double, until condition: () -> Bool) throws {
        guard loop.run(until: condition, timeout: timeout) else {
            throw FixtureError("\(what): not within \(timeout) s")
        }
    }

    /// How often `text` occurs in the file at `path` now.
    static func occurrences(of text: String, in path: String) -> Int {
        (Files.text(path) ?? "").components(separatedBy: text).count - 1
    }

    /// Waits until `text` occurs `count` times in a log another process appends to: inotify wakes
    /// the loop on every write, and the file is read again then.
    func waitForLog(_ path: String, containing text: String, count: Int, what: String, timeout: Double = 10) throws {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw FixtureError("inotify_init1: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard inotify_add_watch(fd, path, UInt32(IN_MODIFY)) >= 0 else {
            throw FixtureError("inotify_add_watch \(path): \(String(cString: strerror(errno)))")
        }
        var found = Self.occurrences(of: text, in: path)
        let source = try loop.watch(fd: fd, events: .readable) { _ in
            var events = [UInt8](repeating: 0, count: 4096)
            while read(fd, &events, events.count) > 0 {}
            found = Self.occurrences(of: text, in: path)
        }
        defer { source.cancel() }
        try wait(what, timeout: timeout) { found >= count }
    }

    /// `sh` starting `arguments` with stdout and stderr appended to `log` (a daemon's debug output
    /// must not fill a pipe nobody reads); `exec` keeps the daemon's PID the one the fixture knows.
    func startDaemon(_ arguments: [String], log: String, environment: [String] = [], name: String) throws -> TestProcess {
        try fixture.start(["/bin/sh", "-c", "log=$1; shift; exec \"$@\" >>\"$log\" 2>&1", "sh", log] + arguments,
                          extraEnvironment: environment, name: name)
    }
}

/// What a test needs from a telephony daemon: bring-up, the user's actions through the daemon's
/// own methods, and what the daemon reports as the reason of each kind of end.
protocol TelephonyDaemon: AnyObject {
    /// `telwatch --backend` value and the `backend` field of its events.
    var backend: String { get }
    /// Its well-known bus name.
    var service: String { get }
    var displayName: String { get }
    /// The daemon's modem object once it is up.
    var modemPath: String { get }
    var process: TestProcess? { get }
    /// Its debug log (appended to across restarts).
    var logPath: String { get }

    /// Starts the daemon (again, after `kill`) and waits until it owns its name.
    func launch() throws
    /// Brings the simulated modem up in the launched daemon, to registered.
    func bringUp() throws
    /// SIGKILL by PID, reaped.
    func kill()

    func answer(_ call: String) throws
    /// Places an outgoing call; returns its object path.
    func dial(_ number: String) throws -> String
    func hangup(_ call: String) throws
    func holdAndAnswer() throws
    func hangupAll() throws
    /// Live calls as the daemon lists them: path → number.
    func liveCalls() throws -> [String: String]

    /// The `reason` telwatch reports for each kind of end, as this daemon words it.
    var reasons: EndReasons { get }
    /// Whether the daemon, started again, keeps and reads the calls the modem already carries.
    var findsLiveCallsWhenRestarted: Bool { get }
}

extension TelephonyDaemon {
    /// `launch()`, then `bringUp()`.
    func start() throws {
        try launch()
        try bringUp()
    }
}

struct EndReasons {
    /// The far end hung up an active call.
    var remoteHangup: String
    /// The caller gave up before the call was answered.
    var callerGaveUp: String
    /// The far end was busy.
    var busy: String
    /// Hung up through the daemon's own Hangup.
    var localHangup: String
    /// Hung up through the daemon's own HangupAll.
    var hangupAll: String
}

// MARK: - ModemManager

/// Debian's ModemManager in test mode: `Test.SetProfile` points the `generic` plugin at the
/// simulator's UNIX socket; a polkit stand-in (dbusmock's `polkitd`, allowing everything) lets
/// the test call Enable, CreateCall, Accept and Hangup.
final class ModemManagerDaemon: TelephonyDaemon {
    static let busName = "org.freedesktop.ModemManager1"
    static let root = "/org/freedesktop/ModemManager1"
    static let modemInterface = "org.freedesktop.ModemManager1.Modem"
    static let voiceInterface = "org.freedesktop.ModemManager1.Modem.Voice"
    static let callInterface = "org.freedesktop.ModemManager1.Call"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    let backend = "modemmanager"
    let service = ModemManagerDaemon.busName
    let displayName = "ModemManager"
    let reasons = EndReasons(remoteHangup: "unknown", callerGaveUp: "unknown", busy: "unknown",
                             localHangup: "terminated", hangupAll: "unknown")
    /// Starting, it sends ATH (its voice support check), which ends the modem's calls, and no
    /// AT+CLCC (it polls the list only while a call is being set up).
    let findsLiveCallsWhenRestarted = false
    let logPath: String
    private(set) var modemPath = ""
    private(set) var process: TestProcess?
    private let bus: BusClient
    private let socketPath: String
    private var polkit: TestProcess?
    /// The plugin `Test.SetProfile` names: `generic`, or one whose modems report tones heard
    /// (docs/modem-stacks.md §14: `simtech` reads `+RXDTMF`, `quectel` `+QTONEDET` from 1.24).
    var plugin = "generic"

    /// The daemon's own `Version` (`1.20.4`, `1.24.0`).
    func version() throws -> String {
        let reply = try bus.call(Self.busName, Self.root, Self.propertiesInterface, "Get",
                                 [.string(Self.busName), .string("Version")])
        guard case .variant(let value)? = reply.first else { return "" }
        return value.string ?? ""
    }

    init(bus: BusClient, socketPath: String) {
        self.bus = bus
        self.socketPath = socketPath
        logPath = bus.fixture.directory + "/ModemManager-debug.log"
    }

    func launch() throws {
        if polkit == nil {
            polkit = try bus.fixture.startMock(template: "polkitd")
            try bus.fixture.waitForName("org.freedesktop.PolicyKit1")
            try bus.call("org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                         "org.freedesktop.DBus.Mock", "AllowUnknown", [.bool(true)])
        }
        let options = ["--test-enable", "--test-no-udev", "--test-no-suspend-resume", "--test-no-qrtr", "--debug"]
        process = try bus.startDaemon(StackUnderTest.daemonCommand(.modemManager) + options, log: logPath,
                                      name: "ModemManager")
        try bus.fixture.waitForName(Self.busName)
    }

    func bringUp() throws {
        // The modem object appears once the generic plugin has probed the port.
        var added: String?
        let watch = bus.connection.subscribe(MatchRule(sender: Self.busName, path: Self.root,
                                                       interface: "org.freedesktop.DBus.ObjectManager",
                                                       member: "InterfacesAdded")) { message in
            if let (path, _) = try? message.decode(ObjectPath.self, [String: PropertyMap].self) { added = path.rawValue }
        }
        defer { watch.cancel() }
        try bus.call(Self.busName, Self.root, "org.freedesktop.ModemManager1.Test", "SetProfile",
                     [.string("telwatch-e2e"), .string(plugin), .array(elementSignature: "s", [.string(socketPath)])])
        try bus.wait("ModemManager exporting the simulated modem", timeout: 20) { added != nil }
        modemPath = added ?? ""

        // DISABLED (3) once initialised; Enable; REGISTERED (8) once +CREG says so.
        try waitForModemState("initialised (disabled)") { $0 == 3 }
        try bus.call(Self.busName, modemPath, Self.modemInterface, "Enable", [.bool(true)], timeout: 30)
        try waitForModemState("registered") { $0 == 8 }
    }

    func kill() {
        process?.signal(SIGKILL)
        process?.wait(timeout: 10)
        process = nil
    }

    /// Follows the modem's `State` through PropertiesChanged until `accept` holds; FAILED (-1) throws.
    private func waitForModemState(_ what: String, _ accept: (Int32) -> Bool) throws {
        var state: Int32?
        let watch = bus.connection.subscribe(MatchRule(sender: Self.busName, path: modemPath,
                                                       interface: Self.propertiesInterface, member: "PropertiesChanged",
                                                       arguments: [0: Self.modemInterface])) { message in
            if let (_, changed, _) = try? message.decode(String.self, PropertyMap.self, [String].self),
               let value = changed["State"]?.value.int32 {
                state = value
            }
        }
        defer { watch.cancel() }
        state = try bus.call(Self.busName, modemPath, Self.propertiesInterface, "Get",
                             [.string(Self.modemInterface), .string("State")]).first?.int32
        try bus.wait("ModemManager's modem \(what) (State now \(state.map(String.init) ?? "?"))", timeout: 20) {
            state.map { accept($0) || $0 == -1 } ?? false
        }
        if state == -1 { throw FixtureError("ModemManager's modem FAILED") }
    }

    /// What ModemManager logs once it listens for the in-call unsolicited codes (NO CARRIER …).
    static let inCallLogLine = "modem is now in-call state"

    /// Accept, then wait until ModemManager is in its in-call state: it sets up its NO CARRIER
    /// handler some milliseconds after the call became active, and a NO CARRIER that arrives
    /// before that is dropped ("operation failure: No carrier") and never noticed, since it stops
    /// polling AT+CLCC once no call is being set up. It says so only in its debug log.
    func answer(_ call: String) throws {
        let before = BusClient.occurrences(of: Self.inCallLogLine, in: logPath)
        try bus.call(Self.busName, call, Self.callInterface, "Accept")
        try bus.waitForLog(logPath, containing: Self.inCallLogLine, count: before + 1,
                           what: "ModemManager entering its in-call state")
    }

    func dial(_ number: String) throws -> String {
        let reply = try bus.call(Self.busName, modemPath, Self.voiceInterface, "CreateCall", [
            .dictionary(keySignature: "s", valueSignature: "v", [.init(.string("number"), .variant(.string(number)))]),
        ])
        guard let path = reply.first?.objectPath?.rawValue else { throw FixtureError("CreateCall answered \(reply)") }
        try bus.call(Self.busName, path, Self.callInterface, "Start")
        return path
    }

    func hangup(_ call: String) throws {
        try bus.call(Self.busName, call, Self.callInterface, "Hangup")
    }

    func holdAndAnswer() throws {
        try bus.call(Self.busName, modemPath, Self.voiceInterface, "HoldAndAccept")
    }

    func hangupAll() throws {
        try bus.call(Self.busName, modemPath, Self.voiceInterface, "HangupAll")
    }

    func liveCalls() throws -> [String: String] {
        let paths = try bus.call(Self.busName, modemPath, Self.voiceInterface, "ListCalls").first?.array ?? []
        var live: [String: String] = [:]
        for path in paths.compactMap({ $0.objectPath?.rawValue }) {
            let properties = try bus.call(Self.busName, path, Self.propertiesInterface, "GetAll",
                                          [.string(Self.callInterface)]).first?.stringKeyedDictionary ?? [:]
            let state = properties["State"]?.int32.flatMap(ModemManagerCallState.init(rawValue:))
            if state != .terminated { live[path] = properties["Number"]?.string ?? "" }
        }
        return live
    }
}

// MARK: - oFono

/// Debian's ofonod with only its built-in phonesim and atmodem plugins: the phonesim plugin
/// connects as a TCP client to the simulator's loopback port (`OFONO_PHONESIM_CONFIG`); the
/// modem is powered, then put online.
final class OfonoDaemon: TelephonyDaemon {
    static let busName = "org.ofono"
    static let modemInterface = "org.ofono.Modem"
    static let managerInterface = "org.ofono.VoiceCallManager"
    static let callInterface = "org.ofono.VoiceCall"

    let backend = "ofono"
    let service = OfonoDaemon.busName
    let displayName = "oFono"
    let reasons = EndReasons(remoteHangup: "remote", callerGaveUp: "remote", busy: "remote", localHangup: "local",
                                 hangupAll: "local")
    /// Its voicecall atom lists the calls (AT+CLCC) when the modem is powered.
    let findsLiveCallsWhenRestarted = true
    let logPath: String
    let modemPath = "/phonesim"
    private(set) var process: TestProcess?
    private let bus: BusClient
    private let configPath: String

    init(bus: BusClient, port: Int) throws {
        self.bus = bus
        logPath = bus.fixture.directory + "/ofonod-debug.log"
        configPath = bus.fixture.directory + "/phonesim.conf"
        try Files.write(configPath, "[phonesim]\nAddress=127.0.0.1\nPort=\(port)\n")
    }

    func launch() throws {
        process = try bus.startDaemon(StackUnderTest.daemonCommand(.ofono) + ["-n", "-d", "-p", "phonesim,atmodem"],
                                      log: logPath, environment: ["OFONO_PHONESIM_CONFIG=" + configPath],
                                      name: "ofonod")
        try bus.fixture.waitForName(Self.busName)

        var modems: Set<String> = []
        let added = bus.connection.subscribe(MatchRule(sender: Self.busName, path: "/", interface: "org.ofono.Manager",
                                                       member: "ModemAdded")) { message in
            if let (path, _) = try? message.decode(ObjectPath.self, PropertyMap.self) { modems.insert(path.rawValue) }
        }
        defer { added.cancel() }
        for entry in try bus.call(Self.busName, "/", "org.ofono.Manager", "GetModems").first?.array ?? [] {
            if case .structure(let fields) = entry, let path = fields.first?.objectPath { modems.insert(path.rawValue) }
        }
        try bus.wait("oFono creating the phonesim modem", timeout: 10) { modems.contains(modemPath) }
    }

    func bringUp() throws {
        // Each SetProperty replies once the modem got there (enabled, then online).
        try bus.call(Self.busName, modemPath, Self.modemInterface, "SetProperty",
                     [.string("Powered"), .variant(.bool(true))], timeout: 30)
        try bus.call(Self.busName, modemPath, Self.modemInterface, "SetProperty",
                     [.string("Online"), .variant(.bool(true))], timeout: 30)
        try waitForRegistration()
    }

    /// NetworkRegistration's `Status` becomes "registered" after +CREG (its interface appears online).
    private func waitForRegistration() throws {
        var status: String?
        let watch = bus.connection.subscribe(MatchRule(sender: Self.busName, path: modemPath,
                                                       interface: "org.ofono.NetworkRegistration",
                                                       member: "PropertyChanged", arguments: [0: "Status"])) { message in
            if let (_, value) = try? message.decode(String.self, Variant.self) { status = value.value.string }
        }
        defer { watch.cancel() }
        if let properties = try? bus.call(Self.busName, modemPath, "org.ofono.NetworkRegistration", "GetProperties")
            .first?.stringKeyedDictionary {
            status = properties["Status"]?.string ?? status
        }
        try bus.wait("oFono registered on the simulated network (Status \(status ?? "?"))", timeout: 15) {
            status == "registered"
        }
    }

    func kill() {
        process?.signal(SIGKILL)
        process?.wait(timeout: 10)
        process = nil
    }

    func answer(_ call: String) throws {
        try bus.call(Self.busName, call, Self.callInterface, "Answer")
    }

    func dial(_ number: String) throws -> String {
        let reply = try bus.call(Self.busName, modemPath, Self.managerInterface, "Dial",
                                 [.string(number), .string("default")])
        guard let path = reply.first?.objectPath?.rawValue else { throw FixtureError("Dial answered \(reply)") }
        return path
    }

    func hangup(_ call: String) throws {
        try bus.call(Self.busName, call, Self.callInterface, "Hangup")
    }

    func holdAndAnswer() throws {
        try bus.call(Self.busName, modemPath, Self.managerInterface, "HoldAndAnswer")
    }

    func hangupAll() throws {
        try bus.call(Self.busName, modemPath, Self.managerInterface, "HangupAll")
    }

    func liveCalls() throws -> [String: String] {
        var live: [String: String] = [:]
        for entry in try bus.call(Self.busName, modemPath, Self.managerInterface, "GetCalls").first?.array ?? [] {
            guard case .structure(let fields) = entry, fields.count == 2, let path = fields[0].objectPath else { continue }
            let properties = fields[1].stringKeyedDictionary ?? [:]
            if properties["State"]?.string != "disconnected" {
                live[path.rawValue] = properties["LineIdentification"]?.string ?? ""
            }
        }
        return live
    }
}
