import Foundation
import Glibc
import Loop

/// Debian's `mosquitto` broker, started by a test on 127.0.0.1 with a port of its own and a config
/// file of the test (never any other address), and `mosquitto_sub` as the independent subscriber.
/// Both are processes of the test's fixture: killed by PID when the test ends, also on failure.
public final class MosquittoBroker {
    public let fixture: BusFixture
    public let port: Int
    public let directory: String
    public private(set) var process: TestProcess?
    /// Extra lines of the config file (an auth or TLS variant).
    public let extraConfig: [String]

    public init(fixture: BusFixture, directory: String, extraConfig: [String] = []) throws {
        self.fixture = fixture
        self.directory = directory
        self.extraConfig = extraConfig
        port = try MosquittoBroker.freePort()
        try start()
    }

    public var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Starts the broker and waits (bounded) until it listens. Persistence is on, so a subscriber's
    /// session and its queued QoS 1 messages survive a restart of the broker.
    public func start() throws {
        var lines = ["listener \(port) 127.0.0.1", "persistence true", "persistence_location \(directory)/",
                     "log_dest stdout", "log_type all", "user root"]
        if !extraConfig.contains(where: { $0.hasPrefix("allow_anonymous") }) { lines.append("allow_anonymous true") }
        lines += extraConfig
        let config = directory + "/mosquitto.conf"
        try (lines.joined(separator: "\n") + "\n").write(toFile: config, atomically: true, encoding: .utf8)
        // Line-buffered: the log is read line by line as it happens.
        let broker = try fixture.start(["stdbuf", "-oL", "mosquitto", "-c", config], name: "mosquitto")
        process = broker
        // mosquitto logs "Opening ipv4 listen socket on port N." before it binds and listens, and
        // "mosquitto version V running" once every listener listens: a client that connected on
        // the first line could be refused under load.
        guard broker.readLine(timeout: 10, where: { $0.contains("listen socket on port \(port)") }) != nil,
              broker.readLine(timeout: 10, where: { $0.hasSuffix(" running") }) != nil else {
            throw FixtureError("mosquitto did not start:\n" + broker.log())
        }
    }

    /// Stops the broker (SIGTERM: it saves its sessions, as a broker restarted by its supervisor does).
    public func stop() {
        process?.signal(SIGTERM)
        _ = process?.wait(timeout: 10)
        process = nil
    }

    /// Waits for a line of the broker's log.
    public func waitForLog(_ text: String, timeout: Double = 15) -> String? {
        process?.readLine(timeout: timeout, where: { $0.contains(text) })
    }

    /// Reads what the broker has logged so far, without waiting: a test that publishes much and
    /// waits for no log line keeps the broker's stdout pipe from filling, which would block it.
    public func drainLog() {
        while process?.readLine(timeout: 0.001) != nil {}
    }

    /// `mosquitto_sub -v` on `topics`: one line per message, "TOPIC PAYLOAD". `session` keeps a
    /// persistent session under that client id, so nothing is lost while the broker restarts.
    public func subscribe(_ topics: [String], session: String? = nil, extra: [String] = []) throws -> TestProcess {
        var arguments = ["stdbuf", "-oL", "mosquitto_sub", "-h", "127.0.0.1", "-p", String(port), "-q", "1", "-v"] + extra
        if let session { arguments += ["-c", "-i", session] }
        for topic in topics { arguments += ["-t", topic] }
        let subscriber = try fixture.start(arguments, name: "mosquitto_sub")
        return subscriber
    }

    /// `mosquitto_pub` of one message (QoS 1, so it has reached the broker when it returns).
    public func publish(_ topic: String, _ payload: String, retain: Bool = false) throws {
        let result = try fixture.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic,
                                      "-m", payload] + (retain ? ["-r"] : []))
        guard result.status == .exited(0) else { throw FixtureError("mosquitto_pub failed:\n" + result.log) }
    }

    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw FixtureError("no free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// One message as `mosquitto_sub -v` prints it.
public struct MQTTMessage {
    public let topic: String
    public let payload: String

    public init?(_ line: String) {
        guard let space = line.firstIndex(of: " ") else {
            // An empty payload: the topic alone.
            topic = line
            payload = ""
            return
        }
        topic = String(line[..<space])
        // mosquitto_sub prints an empty payload as "(null)".
        let text = String(line[line.index(after: space)...])
        payload = text == "(null)" ? "" : text
    }

    public var object: [String: Any]? { JSONLine.object(payload) }
}

extension TestProcess {
    /// The next message on `topic` (others are skipped, and given to `skipped`).
    public func nextMessage(on topic: String, timeout: Double = 15, where predicate: (MQTTMessage) -> Bool = { _ in true },
                     skipped: ((MQTTMessage) -> Void)? = nil) -> MQTTMessage? {
        let line = readLine(timeout: timeout, where: { line in
            guard let message = MQTTMessage(line) else { return false }
            return message.topic == topic && predicate(message)
        }, skipped: { line in MQTTMessage(line).map { skipped?($0) } })
        return line.flatMap(MQTTMessage.init)
    }
}
