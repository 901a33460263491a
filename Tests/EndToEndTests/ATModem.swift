import DBus
import Foundation
import Glibc
import Loop
import TestSupport

/// The project's simulated AT modem (`Tests/Fixtures/atmodem/atmodem.py`, Debian's python3) and
/// the line protocol on its control socket. Every reply is awaited with a bounded wait.
final class ATModem {
    static let script = Repository.path("Tests/Fixtures/atmodem/atmodem.py")
    /// What the simulated modem answers to `AT+CGSN`, `AT+CNUM` and `AT+COPS?` (atmodem.py's IMEI,
    /// OWN_NUMBER, OPERATOR_LONG).
    static let imei = "356938035643809"
    static let ownNumber = "+15550000000"
    static let operatorLong = "Telwatch Test"

    let process: TestProcess
    /// The whole AT dialogue, one line per command, reply and unsolicited code.
    let dialoguePath: String
    /// The loopback TCP port (for oFono's phonesim plugin), when asked for.
    let tcpPort: Int?
    private let controlFD: Int32
    private let replies: LineReader

    /// Starts the simulator on `unixSocket` (a path, for ModemManager) and/or a free loopback TCP port.
    init(fixture: BusFixture, unixSocket: String? = nil, tcp: Bool = false) throws {
        dialoguePath = fixture.directory + "/atmodem-dialogue.log"
        let control = fixture.directory + "/atmodem-control"
        var arguments = [Repository.python, Self.script, "--control", control, "--log", dialoguePath]
        if let unixSocket { arguments += ["--unix", unixSocket] }
        if tcp { arguments += ["--tcp", "0"] }
        process = try fixture.start(arguments, name: "atmodem")
        guard let ready = process.readLine(timeout: 10), ready.hasPrefix("ready") else {
            throw FixtureError("the simulated modem did not start:\n\(process.log())")
        }
        tcpPort = ready.split(separator: " ").first { $0.hasPrefix("tcp=") }.flatMap { Int($0.dropFirst(4)) }
        controlFD = try Self.connect(control)
        replies = LineReader(fd: controlFD)
    }

    deinit { close(controlFD) }

    var dialogue: String { Files.text(dialoguePath) ?? "(no AT dialogue)" }

    // MARK: Commands (see the simulator's docstring)

    /// A new incoming call (RING / +CRING and +CLIP); returns its CLCC index. `numberLater`: a bare
    /// RING, the number (+CLIP, and in AT+CLCC) only once `clip` sends it.
    @discardableResult
    func ring(_ number: String, numberLater: Bool = false) throws -> Int {
        try index(send("ring \(number)" + (numberLater ? " nonumber" : "")))
    }

    /// The late +CLIP of a ringing call.
    func clip(_ call: Int, _ number: String) throws { try send("clip \(call) \(number)") }

    /// A new waiting call (+CCWA) while another is live.
    @discardableResult
    func waiting(_ number: String) throws -> Int { try index(send("waiting \(number)")) }

    /// The far end of an outgoing call rings (the daemon finds out by polling AT+CLCC).
    func alerting(_ call: Int? = nil) throws { try send("alerting" + Self.suffix(call)) }

    func remoteAnswer(_ call: Int? = nil) throws { try send("remote-answer" + Self.suffix(call)) }

    /// The far end hangs up (or the caller gives up): the call leaves the list, NO CARRIER is sent.
    func remoteHangup(_ call: Int? = nil) throws { try send("remote-hangup" + Self.suffix(call)) }

    /// The far end is busy: the outgoing call leaves the list, BUSY is sent.
    func busy(_ call: Int? = nil) throws { try send("busy" + Self.suffix(call)) }

    /// The call list as CLCC lines.
    func calls() throws -> [String] {
        try send("calls").split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The number of AT commands received so far, for `awaitCommand(_:since:)`.
    func mark() throws -> Int { try index(send("mark")) }

    /// Waits (bounded, in the simulator) until the daemon sent an AT command matching the regular
    /// expression `pattern` after the first `since` commands; returns that command.
    @discardableResult
    func awaitCommand(_ pattern: String, since: Int = 0, timeout: Double = 10) throws -> String {
        try send("await \(pattern) \(timeout) \(since)", timeout: timeout + 5)
    }

    /// The first AT command after the first `since` matching the regular expression `pattern`
    /// (no blanks), when the modem received it (`monotonicNow()`'s clock), and how many commands
    /// it had received with it (a `since` for what came after); nil when none has. It does not
    /// wait: check after something the daemon sent later, or after `awaitCommand`.
    func seen(_ pattern: String, since: Int = 0) throws -> (command: String, at: Double, count: Int)? {
        let line = try exchange("seen \(pattern) \(since)", timeout: 10)
        if line == "error none" { return nil }
        let words = line.split(separator: " ", maxSplits: 3).map(String.init)
        guard words.count == 4, words[0] == "ok", let count = Int(words[1]), let at = Double(words[2]) else {
            throw FixtureError("atmodem 'seen \(pattern)': \(line)")
        }
        return (words[3], at, count)
    }

    /// Sends one control line and returns what follows `ok`; an `error` reply is thrown.
    @discardableResult
    func send(_ command: String, timeout: Double = 10) throws -> String {
        let line = try exchange(command, timeout: timeout)
        if line == "ok" { return "" }
        if line.hasPrefix("ok ") { return String(line.dropFirst(3)) }
        throw FixtureError("atmodem '\(command)': \(line)")
    }

    // MARK: Plumbing

    /// Sends one control line and returns the reply line as it is.
    private func exchange(_ command: String, timeout: Double) throws -> String {
        let bytes = Array((command + "\n").utf8)
        guard bytes.withUnsafeBytes({ write(controlFD, $0.baseAddress, $0.count) }) == bytes.count else {
            throw FixtureError("atmodem control: write failed")
        }
        return try readLine(timeout: timeout, command: command)
    }

    private func index(_ reply: String) throws -> Int {
        guard let value = Int(reply) else { throw FixtureError("atmodem: expected a number, got '\(reply)'") }
        return value
    }

    private static func suffix(_ call: Int?) -> String { call.map { " \($0)" } ?? "" }

    private func readLine(timeout: Double, command: String) throws -> String {
        switch replies.next(timeout: timeout) {
        case .line(let line): return line
        case .timedOut: throw FixtureError("atmodem '\(command)': no reply within \(timeout) s")
        case .ended: throw FixtureError("atmodem '\(command)': the control socket closed")
        }
    }

    private static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw FixtureError("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw FixtureError("connect \(path): \(why)")
        }
        return fd
    }
}
