import DBus
import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

enum DaemonKind {
    case modemManager, ofono

    /// On this machine, or in the Debian root chosen for it (StackUnderTest): Debian's path in both.
    var executable: String { self == .modemManager ? "/usr/sbin/ModemManager" : "/usr/sbin/ofonod" }
    var package: String { self == .modemManager ? "modemmanager" : "ofono" }
}

/// One end-to-end world per test: a private bus with dbusmock's own logind, the simulated AT
/// modem, the real daemon (unmodified, from Debian's package) brought up on that modem, and the
/// real `telwatch watch --json` as a subprocess. Everything is killed by PID in `stop()`; on a
/// failure the daemon's log, the AT dialogue and telwatch's output are printed and kept.
final class EndToEndHarness {
    let kind: DaemonKind
    let logind: LogindHarness
    let bus: BusClient
    let modem: ATModem
    let daemon: any TelephonyDaemon
    private(set) var telwatch: TestProcess?
    private var telwatchRuns: [TestProcess] = []
    /// Every line telwatch printed, over all its runs in this test.
    private(set) var transcript: [String] = []
    /// Call ids as A, B, C… in order of first appearance.
    private var labels: [String: String] = [:]
    private var stopped = false

    var fixture: BusFixture { logind.fixture }
    /// What telwatch said on stderr, over all its runs in this test.
    var telwatchLog: String { telwatchRuns.map { $0.log() }.joined(separator: "\n----- (next run)\n") }
    var stateDirectory: String { fixture.directory + "/state" }

    init(_ kind: DaemonKind) throws {
        self.kind = kind
        logind = try LogindHarness()
        do {
            bus = BusClient(fixture: logind.fixture, loop: logind.loop, connection: logind.connection)
            try StackUnderTest.checkDaemon(kind, fixture: logind.fixture)
            if getenv("TELWATCH_E2E_KEEP_LOGS") != nil {
                // Every message on the test bus, for reading a kept test afterwards.
                _ = try bus.startDaemon(["dbus-monitor", "--address", logind.fixture.address],
                                       log: logind.directory + "/dbus-monitor.log", name: "dbus-monitor")
            }
            switch kind {
            case .modemManager:
                let socket = logind.directory + "/atmodem.sock"
                modem = try ATModem(fixture: logind.fixture, unixSocket: socket)
                daemon = ModemManagerDaemon(bus: bus, socketPath: socket)
            case .ofono:
                modem = try ATModem(fixture: logind.fixture, tcp: true)
                guard let port = modem.tcpPort else { throw FixtureError("the simulator printed no TCP port") }
                daemon = try OfonoDaemon(bus: bus, port: port)
            }
        } catch {
            logind.stop()
            throw error
        }
    }

    // MARK: telwatch

    /// The calls `telwatch log --json` lists, newest first, each as
    /// `NUMBER STATE DIRECTION answered|unanswered [missed unseen] reason=R [screened=ACTION]`.
    func history(file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let result = try fixture.run(StackUnderTest.telwatchCommand + ["log", "--json", "--state-dir",
                                                                       stateDirectory])
        XCTAssertEqual(result.status, .exited(0), result.log, file: file, line: line)
        return try result.output.split(separator: "\n").map { text in
            let row = try XCTUnwrap(JSONLine.object(String(text)), String(text), file: file, line: line)
            var parts = [row["number"] as? String ?? "?", row["state"] as? String ?? "?", row["direction"] as? String ?? "?",
                         row["connected_at"] is NSNull ? "unanswered" : "answered"]
            if row["missed"] as? Bool == true { parts.append("missed") }
            if row["unseen"] as? Bool == true { parts.append("unseen") }
            parts.append("reason=" + (row["reason"] as? String ?? "-"))
            if let screened = row["screened"] as? String { parts.append("screened=" + screened) }
            return parts.joined(separator: " ")
        }
    }

    /// Starts `telwatch watch --json` on the private bus and reads up to its `ready` line.
    /// Returns the summaries of the lines before and including `ready`.
    @discardableResult
    func startTelwatch(_ extra: [String] = []) throws -> [String] {
        let process = try fixture.start(StackUnderTest.telwatchCommand + [
            "watch", "--bus", fixture.address, "--json", "--backend", daemon.backend, "--state-dir", stateDirectory,
        ] + extra, name: "telwatch")
        telwatch = process
        telwatchRuns.append(process)
        var seen: [String] = []
        while let summary = nextSummary(timeout: 15) {
            seen.append(summary)
            if summary == "ready" { return seen }
        }
        throw FixtureError("telwatch never printed ready; it printed \(seen)")
    }

    /// Reads telwatch's next lines until there are as many as `expected`, and compares them (as
    /// summaries) with `expected`: exactly these events, in this order. A wrong line fails at once.
    func expect(_ expected: [String], timeout: Double = 10, file: StaticString = #filePath, line: UInt = #line) {
        let got = read(expected.count, timeout: timeout) { index, summary in summary == expected[index] }
        XCTAssertEqual(got, expected, "telwatch's events (what it printed: see the logs below)", file: file, line: line)
    }

    /// As `expect`, where telwatch may rightly print either `expected` or `alternative` (both the
    /// same length): the daemon's own timing decides which.
    func expect(_ expected: [String], or alternative: [String], timeout: Double = 10,
                file: StaticString = #filePath, line: UInt = #line) {
        let got = read(expected.count, timeout: timeout) { index, summary in
            summary == expected[index] || summary == alternative[index]
        }
        XCTAssertTrue(got == expected || got == alternative,
                      "telwatch's events \(got) are neither \(expected) nor \(alternative)", file: file, line: line)
    }

    /// The summaries up to and including the first that is `last` (bounded by `timeout`), for a
    /// scenario whose lines the daemons' timing may order in more ways than `expect(_:or:)` lists.
    func lines(through last: String, timeout: Double = 15) -> [String] {
        lines(until: { $0 == last }, timeout: timeout)
    }

    /// The summaries up to and including the first that `last` accepts (bounded by `timeout`).
    func lines(until last: (String) -> Bool, timeout: Double = 15) -> [String] {
        var got: [String] = []
        let deadline = monotonicNow() + timeout
        while got.last.map(last) != true, let summary = nextSummary(timeout: max(0, deadline - monotonicNow())) {
            got.append(summary)
        }
        return got
    }

    /// Up to `count` summaries, stopping early at the first one `fits` refuses or at the deadline.
    private func read(_ count: Int, timeout: Double, fits: (Int, String) -> Bool) -> [String] {
        var got: [String] = []
        let deadline = monotonicNow() + timeout
        while got.count < count, let summary = nextSummary(timeout: max(0, deadline - monotonicNow())) {
            got.append(summary)
            if !fits(got.count - 1, summary) { break }
        }
        return got
    }

    /// SIGTERM; telwatch must end with only its `exit` line left to print, and status 0.
    func stopTelwatch(file: StaticString = #filePath, line: UInt = #line) {
        guard let process = telwatch else { return }
        process.signal(SIGTERM)
        var rest: [String] = []
        while let summary = nextSummary(timeout: 10) { rest.append(summary) }
        XCTAssertEqual(rest, ["exit"], "nothing but the exit line after the scenario", file: file, line: line)
        XCTAssertEqual(process.wait(timeout: 10), .exited(0), "telwatch's exit status", file: file, line: line)
        telwatch = nil
    }

    /// SIGKILL, once telwatch has finished the turns before (a SIGUSR1 is read only after the
    /// loop waited, so after their persist phase): what a crash leaves behind.
    func killTelwatch(file: StaticString = #filePath, line: UInt = #line) {
        guard let process = telwatch else { return }
        process.signal(SIGUSR1)
        XCTAssertEqual(lines(through: "stats").last, "stats", "telwatch answers SIGUSR1", file: file, line: line)
        process.signal(SIGKILL)
        XCTAssertEqual(process.wait(timeout: 10), .signaled(SIGKILL), file: file, line: line)
        telwatch = nil
    }

    /// The JSON object of every call event telwatch printed for the call labelled `label`.
    func callEvents(_ label: String) -> [[String: Any]] {
        transcript.compactMap(JSONLine.object).filter { object in
            guard let id = object["call_id"] as? String else { return false }
            return labels[id] == label
        }
    }

    private func nextSummary(timeout: Double) -> String? {
        guard let process = telwatch, let line = process.readLine(timeout: timeout) else { return nil }
        transcript.append(line)
        guard let object = JSONLine.object(line) else { return "not JSON: \(line)" }
        return summary(object)
    }

    /// One line of telwatch's JSON as a short exact text. Call events:
    /// `EVENT LABEL [state=S] [prev=P] detail=D dir=DIR number=N [reason=R] [missed] [initial] [multiparty] live=N`
    /// (state only when the event is not the state's own name; reason only when the call ended).
    /// Schema violations are reported inline so that they fail the comparison.
    func summary(_ object: [String: Any]) -> String {
        let event = object["event"] as? String ?? "?"
        func text(_ key: String) -> String? { object[key] as? String }
        switch event {
        case "incoming", "dialing", "connected", "disconnected", "updated", "missed":
            guard let id = text("call_id"), UUID(uuidString: id) != nil else { return "\(event) without a UUID call_id" }
            let label = labels[id] ?? {
                let next = String(UnicodeScalar(UInt8(ascii: "A") + UInt8(labels.count)))
                labels[id] = next
                return next
            }()
            let state = text("state") ?? "?"
            var parts = [event, label]
            if state != event { parts.append("state=" + state) }
            if event == state, let previous = text("previous") { parts.append("prev=" + previous) }
            parts.append("detail=" + (text("detail") ?? "-"))
            parts.append("dir=" + (text("direction") ?? "?"))
            parts.append("number=" + (text("number") ?? "?"))
            if state == "disconnected" { parts.append("reason=" + (text("reason") ?? "-")) }
            if object["missed"] as? Bool == true { parts.append("missed") }
            if object["initial"] as? Bool == true { parts.append("initial") }
            if object["multiparty"] as? Bool == true { parts.append("multiparty") }
            parts.append("live=\(object["live_calls"] as? Int ?? -1)")
            parts += schemaProblems(object, state: state)
            return parts.joined(separator: " ")
        case "screened":
            // `screened LABEL ACTION rule=R hangup=H`: hangup `-` unless the rule rejected.
            let id = text("call_id") ?? ""
            return "screened \(labels[id] ?? "?") \(text("action") ?? "?") rule=\(text("rule") ?? "?") "
                + "hangup=\(text("hangup") ?? "-")"
        case "tones":
            // `tones LABEL TONES dropped=N`.
            let id = text("call_id") ?? ""
            return "tones \(labels[id] ?? "?") \(text("tones") ?? "?") dropped=\(object["dropped"] as? Int ?? -1)"
        case "acted":
            // `acted ACT LABEL by=B result=R`: LABEL `-` without a call, `?` for a call never seen.
            let call = text("call_id").map { labels[$0] ?? "?" } ?? "-"
            return "acted \(text("act") ?? "?") \(call) by=\(text("by") ?? "?") result=\(text("result") ?? "?")"
        case "run-started", "run-stopped":
            return "\(event) reason=\(text("reason") ?? "-")"
        case "lock-taken":
            return "lock-taken \(text("what") ?? "?")/\(text("mode") ?? "?")"
        case "backend":
            var parts = ["backend", text("status") ?? "?"]
            if text("backend") != daemon.backend { parts.append("backend=\(text("backend") ?? "?")") }
            if let modems = object["modems"] as? Int { parts.append("modems=\(modems)") }
            if let calls = object["calls"] as? Int { parts.append("calls=\(calls)") }
            return parts.joined(separator: " ")
        default:
            return event
        }
    }

    /// What a call event line says that the schema forbids, as words that break the comparison.
    private func schemaProblems(_ object: [String: Any], state: String) -> [String] {
        var problems: [String] = []
        if object["backend"] as? String != daemon.backend { problems.append("!backend") }
        if object["modem"] as? String != daemon.modemPath { problems.append("!modem=\(object["modem"] ?? "nil")") }
        if (object["path"] as? String ?? "").isEmpty { problems.append("!path") }
        for key in ["time", "first_seen"] where !Self.isTimestamp(object[key]) { problems.append("!\(key)") }
        let ended = state == "disconnected"
        if ended != Self.isTimestamp(object["ended_at"]) { problems.append("!ended_at") }
        if ended != (object["duration"] is Double || object["duration"] is Int) { problems.append("!duration") }
        if state == "connected" && !Self.isTimestamp(object["connected_at"]) { problems.append("!connected_at") }
        return problems
    }

    private static func isTimestamp(_ value: Any?) -> Bool {
        guard let text = value as? String else { return false }
        return text.count >= 20 && text.dropFirst(10).first == "T" && text.hasSuffix("Z")
    }

    // MARK: The inhibitor lock (dbusmock logind's ListInhibitors)

    /// telwatch's entries in ListInhibitors once `condition` holds for them (nil: not within `timeout`).
    private func telwatchLocks(timeout: Double = 5, until condition: ([Inhibitor]) -> Bool) -> [Inhibitor]? {
        logind.waitForInhibitors(timeout: timeout) { list in condition(list.filter { $0.who == "telwatch" }) }?
            .filter { $0.who == "telwatch" }
    }

    func assertLockHeld(_ context: String, file: StaticString = #filePath, line: UInt = #line) {
        let held = telwatchLocks { $0.count == 1 }
        XCTAssertEqual(held?.count, 1, "telwatch holds one inhibitor lock: \(context)", file: file, line: line)
        XCTAssertEqual(held?.first.map { "\($0.what)/\($0.mode)" }, "sleep/block", file: file, line: line)
    }

    func assertNoLock(_ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(telwatchLocks { $0.isEmpty }?.count, 0, "telwatch holds no inhibitor lock: \(context)",
                       file: file, line: line)
    }

    // MARK: The daemon's calls

    /// The daemon's object path for its live call with `number`. Asked after telwatch reported the
    /// call: telwatch learnt of it from the daemon, so the daemon lists it by then.
    func callPath(_ number: String) throws -> String {
        let live = try daemon.liveCalls()
        guard let path = live.first(where: { $0.value == number })?.key else {
            throw FixtureError("\(daemon.displayName) lists no live call with number \(number): \(live)")
        }
        return path
    }

    /// Waits until the daemon lists a live call with `number` (before telwatch runs, so nothing
    /// else says it has): asks again after each signal the daemon sends, bounded.
    func waitForCall(_ number: String, timeout: Double = 10) throws -> String {
        var signals = 0
        var asked = -1
        var found: String?
        let watch = bus.connection.subscribe(MatchRule(sender: daemon.service)) { _ in signals += 1 }
        defer { watch.cancel() }
        try bus.wait("\(daemon.displayName) listing a call from \(number)", timeout: timeout) {
            if asked != signals {
                asked = signals
                found = try? callPath(number)
            }
            return found != nil
        }
        return found ?? ""
    }

    // MARK: Ending

    /// Kills everything by PID (newest first) and removes the directory. The logs of a failed
    /// test (of every test with TELWATCH_E2E_KEEP_LOGS set) are copied to
    /// /tmp/telwatch-e2e-logs/<test>/ first; a failed test's are printed too.
    func stop(test: String, failed: Bool) {
        guard !stopped else { return }
        stopped = true
        if failed || getenv("TELWATCH_E2E_KEEP_LOGS") != nil { keepLogs(test, print: failed) }
        logind.stop()
    }

    private func keepLogs(_ test: String, print printing: Bool) {
        let keep = "/tmp/telwatch-e2e-logs/" + test.map { $0.isLetter || $0.isNumber ? $0 : "-" }
        try? Files.makeDirectory("/tmp/telwatch-e2e-logs")
        try? Files.makeDirectory(keep)
        let daemonLog = Files.text(daemon.logPath) ?? ""
        let dialogue = modem.dialogue
        try? Files.write(keep + "/telwatch-stdout.jsonl", transcript.joined(separator: "\n") + "\n")
        try? Files.write(keep + "/telwatch-stderr.log", telwatchLog)
        try? Files.write(keep + "/\(daemon.displayName)-debug.log", daemonLog)
        try? Files.write(keep + "/atmodem-dialogue.log", dialogue)
        try? Files.write(keep + "/processes.log", fixture.logs())
        if let monitor = Files.text(fixture.directory + "/dbus-monitor.log") {
            try? Files.write(keep + "/dbus-monitor.log", monitor)
        }
        guard printing else { return }
        func tail(_ text: String, _ count: Int) -> String {
            text.split(separator: "\n", omittingEmptySubsequences: false).suffix(count).joined(separator: "\n")
        }
        print("""
        ===== \(test) failed; its logs are kept in \(keep)
        ----- what ran: \(StackUnderTest.describe(kind))
        ----- telwatch stdout
        \(transcript.joined(separator: "\n"))
        ----- telwatch stderr
        \(telwatchLog)
        ----- AT dialogue (last 150 lines)
        \(tail(dialogue, 150))
        ----- \(daemon.displayName) debug log (last 120 lines)
        \(tail(daemonLog, 120))
        ----- other processes
        \(fixture.logs())
        =====
        """)
    }
}
