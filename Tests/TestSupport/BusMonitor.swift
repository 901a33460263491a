import Glibc
import Loop

/// One message as `dbus-monitor` printed it: the header's fields and the argument lines.
public struct MonitoredMessage: CustomStringConvertible {
    /// `method call`, `method return`, `signal` or `error`.
    public var kind: String
    /// The bus daemon's wall-clock time when it routed the message (seconds).
    public var time: Double
    public var fields: [String: String]
    /// The argument lines, trimmed: `string "phone-incoming-call"`, `uint32 1`, …
    public var arguments: [String] = []

    public var member: String? { fields["member"] }
    public var sender: String? { fields["sender"] }
    public var destination: String? { fields["destination"] }
    public var serial: String? { fields["serial"] }
    public var replySerial: String? { fields["reply_serial"] }

    /// The first `uint32` argument.
    public var firstUInt32: UInt32? {
        arguments.lazy.compactMap { $0.hasPrefix("uint32 ") ? UInt32($0.dropFirst(7)) : nil }.first
    }

    public func hasArgument(_ line: String) -> Bool { arguments.contains(line) }

    public var description: String {
        "\(kind) \(member ?? "") at \(time) from \(sender ?? "?") \(arguments.joined(separator: " | "))"
    }

    init?(header: String) {
        let kinds = ["method call", "method return", "signal", "error"]
        guard let kind = kinds.first(where: { header.hasPrefix($0 + " time=") }) else { return nil }
        self.kind = kind
        var fields: [String: String] = [:]
        for word in header.dropFirst(kind.count).split(separator: " ") {
            guard let equals = word.firstIndex(of: "=") else { continue }
            var value = word[word.index(after: equals)...]
            if value.hasSuffix(";") { value = value.dropLast() }
            fields[String(word[..<equals])] = String(value)
        }
        guard let time = fields["time"].flatMap(Double.init) else { return nil }
        self.time = time
        self.fields = fields
    }
}

/// `dbus-monitor` on a test bus (never a machine bus): every message the bus routes, with the
/// daemon's timestamps, read as whole messages, each wait bounded. This is how tests see what
/// telwatch sends to a service, without a mock of telwatch's own layer.
public final class BusMonitor {
    public let process: TestProcess
    /// Every message read so far, in order.
    public private(set) var messages: [MonitoredMessage] = []
    private var lookahead: String?
    private var next = 0

    /// Starts `dbus-monitor` on `fixture`'s bus; returns once it is listening.
    public init(_ fixture: BusFixture) throws {
        process = try fixture.start(["dbus-monitor", "--address", fixture.address], name: "dbus-monitor")
        // It becomes a monitor before it says anything: its NameLost is the first message shown.
        guard waitFor(timeout: 10, { $0.member == "NameLost" }) != nil else {
            throw FixtureError("dbus-monitor did not start: \(process.log())")
        }
    }

    /// The first message from the current position on that satisfies `predicate` (the position
    /// moves past it), or nil when none came within `timeout` seconds.
    @discardableResult
    public func waitFor(timeout: Double = 10, _ predicate: (MonitoredMessage) -> Bool) -> MonitoredMessage? {
        let deadline = monotonicNow() + timeout
        while true {
            while next < messages.count {
                let message = messages[next]
                next += 1
                if predicate(message) { return message }
            }
            let left = deadline - monotonicNow()
            guard left > 0, readMore(timeout: left) else { return nil }
        }
    }

    /// The first message from `index` on that satisfies `predicate`, waiting at most `timeout`;
    /// the position stays where it was. For a message whose order against the one the test
    /// waited for is not fixed: two sinks answering one event (the ring's EndFeedback waits for
    /// feedbackd's reply, callaudiod's SelectMode does not).
    public func waitFor(from index: Int, timeout: Double = 10, _ predicate: (MonitoredMessage) -> Bool)
        -> MonitoredMessage? {
        let mark = next
        defer { next = mark }
        next = min(index, messages.count)
        return waitFor(timeout: timeout, predicate)
    }

    /// The answer to a method call seen here (its method return or error).
    public func reply(to call: MonitoredMessage, timeout: Double = 10) -> MonitoredMessage? {
        guard let serial = call.serial, let caller = call.sender else { return nil }
        var found: MonitoredMessage?
        for message in messages where message.replySerial == serial && message.destination == caller {
            found = message
        }
        if let found { return found }
        let mark = next
        defer { next = mark }
        return waitFor(timeout: timeout) { $0.replySerial == serial && $0.destination == caller }
    }

    /// Reads whatever else has arrived, waiting at most `timeout` for something: for counting
    /// what came after a point the test waited for in another way.
    public func drain(timeout: Double = 0.2) {
        while readMore(timeout: timeout) {}
    }

    /// Every message seen from `index` on.
    public func seen(from index: Int = 0) -> ArraySlice<MonitoredMessage> { messages[min(index, messages.count)...] }

    public var position: Int { next }

    /// Reads one whole message. dbus-monitor writes each message in one go (header, then its
    /// argument lines) and flushes: the lines that belong to a header are already there.
    private func readMore(timeout: Double) -> Bool {
        guard let line = lookahead ?? process.readLine(timeout: timeout) else { return false }
        lookahead = nil
        guard var message = MonitoredMessage(header: line) else { return true }
        while let more = process.readLine(timeout: 0.005) {
            if MonitoredMessage(header: more) != nil {
                lookahead = more
                break
            }
            message.arguments.append(more.trimmingCharacters())
        }
        messages.append(message)
        return true
    }
}

extension String {
    fileprivate func trimmingCharacters() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
