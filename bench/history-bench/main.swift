// history-bench: what the call history costs telwatch's event loop per call, what `telwatch log`
// costs over 10,000 calls, and that retention keeps the file bounded over years of calls.
// The sink runs exactly as in the daemon (a HistorySink fed by the real CallTracker, its
// prepare() called as the loop calls it), on real SQLite files. Prints a table, then one JSON
// line. See bench/README.md.
import BGRunManager
import CallMonitor
import Glibc
import History
import Loop
import Pipeline

func say(_ text: String, to fd: Int32 = 1) {
    var line = text + "\n"
    line.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
}

func fail(_ text: String) -> Never {
    say("history-bench: " + text, to: 2)
    exit(1)
}

struct Settings {
    var calls = 10_000
    var directory = "/tmp"
    var retentionDirectory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    var telwatch = ".build/release/telwatch"
    var logRuns = 20
    var years = 3
    var perDay = 20
    var rounds = 3
    var phases: Set<String> = ["loop", "log", "retention"]
}

func number(_ text: String?, _ option: String) -> Int {
    guard let text, let value = Int(text), value > 0 else { fail("\(option) takes a positive number") }
    return value
}

var settings = Settings()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--calls": settings.calls = number(arguments.popFirst(), argument)
    case "--dir": settings.directory = arguments.popFirst() ?? ""
    case "--retention-dir": settings.retentionDirectory = arguments.popFirst() ?? ""
    case "--telwatch": settings.telwatch = arguments.popFirst() ?? ""
    case "--log-runs": settings.logRuns = number(arguments.popFirst(), argument)
    case "--years": settings.years = number(arguments.popFirst(), argument)
    case "--per-day": settings.perDay = number(arguments.popFirst(), argument)
    case "--rounds": settings.rounds = number(arguments.popFirst(), argument)
    case "--phases": settings.phases = Set((arguments.popFirst() ?? "").split(separator: ",").map(String.init))
    case "--help", "-h":
        say("""
        usage: history-bench [--calls N] [--rounds R] [--dir DIR] [--telwatch PATH] [--log-runs N]
                             [--years Y] [--per-day D] [--retention-dir DIR] [--phases loop,log,retention]
        loop: N calls through the daemon's pipeline (runs and history), history off and on in turn,
              in R rounds: µs per call, and each kind of loop turn's time, p50/p99/max
        log: `telwatch log --limit 20` and others over those N calls, spawn to exit, median of --log-runs
        retention: Y years of D calls a day with history-keep 365d: rows and file size each quarter
        """)
        exit(0)
    default: fail("unknown argument \(argument) (see --help)")
    }
}

func scratch(in parent: String, _ name: String) -> String {
    var template = Array("\(parent)/history-bench-\(name)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fail("mkdtemp in \(parent) failed") }
    return String(cString: made)
}

func removeTree(_ path: String) {
    guard let pid = try? Subprocess.spawn(["rm", "-rf", "--", path], stdout: .null, stderr: .null) else { return }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func micro(_ seconds: Double) -> String { String(format1(seconds * 1e6)) }
func format1(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
}
func format2(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let rest = abs(hundredths % 100)
    return "\(hundredths / 100).\(rest < 10 ? "0" : "")\(rest)"
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}

/// The daemon's pipeline with what history needs around it: the real tracker, `TelManager` and a
/// `BGRunManager` (no inhibitor, its run record in the state directory), the history sink last as
/// `WatchSession` puts it. A turn is what the loop does for one backend event: the pipeline
/// delivers the events, then `prepare()` runs for every hook before the wait.
final class Daemon {
    let loop: EventLoop
    let pipeline: EventPipeline
    var runs: BGRunManager!
    var tracker = CallTracker()
    var now: Double
    private var next = 0

    init(directory: String, history: HistorySink?, loop: EventLoop, now: Double) throws {
        self.loop = loop
        self.now = now
        var liveCalls: () -> Int = { 0 }
        pipeline = EventPipeline(liveCalls: { liveCalls() })
        let configuration = RunConfiguration(lock: nil, commandEnvironment: [], stateDirectory: directory)
        runs = try BGRunManager(loop: loop, lockBus: nil, configuration: configuration) { [unowned self] event in
            self.pipeline.send(.run(event))
        }
        pipeline.append(TelManager(runs: runs))
        if let history { pipeline.append(history) }
        liveCalls = { [unowned self] in self.tracker.liveCount }
    }

    func key(_ n: Int) -> CallKey { CallKey(backend: .modemManager, path: "/org/freedesktop/ModemManager1/Call/\(n)") }

    func deliver(_ event: BackendEvent) {
        pipeline.send(.calls(tracker.apply(event, at: now), time: now))
    }

    /// One call's life in three turns (rings, is answered or not, ends with its run); returns
    /// each turn's time in seconds, the second nil for a call never answered.
    func call(answered: Bool, number: String) -> (ring: Double, answer: Double?, end: Double) {
        next += 1
        let key = key(next)
        let ring = turn {
            deliver(.callAppeared(key, modem: "/org/freedesktop/ModemManager1/Modem/0",
                                  CallObservation(phase: .live(.incoming, .ringing), direction: .incoming,
                                                  number: number, reason: "incoming-new"), initial: false))
        }
        now += 3
        let answer: Double? = answered ? turn {
            deliver(.callChanged(key, CallObservation(phase: .live(.connected, .active), reason: "accepted")))
        } : nil
        now += answered ? 60 : 12
        let end = turn { deliver(.callChanged(key, CallObservation(phase: .ended, reason: "terminated"))) }
        return (ring, answer, end)
    }

    func turn(_ work: () -> Void) -> Double {
        let start = monotonicNow()
        work()
        loop.iterate(maxWait: 0)
        return monotonicNow() - start
    }

    func finish() {
        var done = false
        pipeline.finish { done = true }
        loop.run(until: { done }, timeout: 10)
    }
}

var results: [(String, String)] = []
var json: [String] = []

// MARK: loop

struct TurnTimes {
    var rings: [Double] = []
    var answers: [Double] = []
    var ends: [Double] = []
    var perCall: [Double] = []
    var stormEvents: [Double] = []

    var stormEvent: Double { percentile(stormEvents, 0.5) }

    mutating func add(_ other: TurnTimes) {
        rings += other.rings
        answers += other.answers
        ends += other.ends
        perCall += other.perCall
        stormEvents += other.stormEvents
    }

    var meanPerCall: Double { perCall.reduce(0, +) / Double(max(1, perCall.count)) }

    static func summary(_ values: [Double]) -> String {
        "\(micro(percentile(values, 0.5))) / \(micro(percentile(values, 0.99))) / \(micro(values.max() ?? 0))"
    }

    static func json(_ values: [Double]) -> String {
        "{\"p50\":\(percentile(values, 0.5) * 1e6),\"p99\":\(percentile(values, 0.99) * 1e6),\"max\":\((values.max() ?? 0) * 1e6)}"
    }
}

/// `calls` calls through the pipeline, a third of them missed, then a storm's worth of events
/// that change nothing history keeps (held, active again) among 200 live calls.
func drive(history: Bool, directory: String, calls: Int) throws -> TurnTimes {
    let loop = try EventLoop()
    let sink = history ? HistorySink(settings: HistorySettings(directory: directory, keep: 365 * 86_400), loop: loop,
                                     report: { say("history-bench: the sink said: " + $0, to: 2) }) : nil
    let daemon = try Daemon(directory: directory, history: sink, loop: loop, now: wallClockNow() - Double(calls) * 120)
    var times = TurnTimes()
    for n in 0..<calls {
        let turns = daemon.call(answered: n % 3 != 0, number: "+1555\(1_000_000 + n)")
        times.rings.append(turns.ring)
        if let answer = turns.answer { times.answers.append(answer) }
        times.ends.append(turns.end)
        times.perCall.append(turns.ring + (turns.answer ?? 0) + turns.end)
        daemon.now += 60
    }
    var live: [CallKey] = []
    _ = daemon.turn {
        for n in 0..<200 {
            let key = daemon.key(1_000_000 + n)
            live.append(key)
            daemon.deliver(.callAppeared(key, modem: "/org/freedesktop/ModemManager1/Modem/0",
                                         CallObservation(phase: .live(.connected, .active), direction: .incoming,
                                                         number: "+1555\(2_000_000 + n)"), initial: true))
        }
    }
    let events = 100_000
    var spent = 0.0
    for batch in 0..<(events / 10) {
        spent += daemon.turn {
            for n in (batch * 10)..<(batch * 10 + 10) {
                let detail: CallDetail = (n / 200) % 2 == 0 ? .held : .active
                daemon.deliver(.callChanged(live[n % 200], CallObservation(phase: .live(.connected, detail))))
            }
        }
    }
    times.stormEvents = [spent / Double(events)]
    daemon.finish()
    return times
}

var loopDirectory: String?
if settings.phases.contains("loop") || settings.phases.contains("log") {
    let off = scratch(in: settings.directory, "off")
    let on = scratch(in: settings.directory, "on")
    loopDirectory = on
    let started = monotonicNow()
    // Off and on in turn, the order swapped each round: a busy machine's moods fall on both. The
    // history accumulates in one directory, so that `log` then reads all the calls.
    var without = TurnTimes()
    var with = TurnTimes()
    let perRound = (settings.calls + settings.rounds - 1) / settings.rounds
    for round in 0..<settings.rounds {
        let calls = min(perRound, settings.calls - round * perRound)
        guard calls > 0 else { break }
        for history in round % 2 == 0 ? [false, true] : [true, false] {
            let times = try drive(history: history, directory: history ? on : off, calls: calls)
            if history { with.add(times) } else { without.add(times) }
        }
    }
    removeTree(off)
    results += [
        ("loop: \(settings.calls) calls through the pipeline, \(settings.rounds) rounds (\(settings.directory), "
         + "\(format1(monotonicNow() - started)) s)",
         "history off | on"),
        ("  per call, mean of its 3 turns (µs)", micro(without.meanPerCall) + " | " + micro(with.meanPerCall)),
        ("  history's share per call (µs)", micro(with.meanPerCall - without.meanPerCall)),
        ("  ring turn (row inserted) p50 / p99 / max µs", TurnTimes.summary(without.rings) + " | " + TurnTimes.summary(with.rings)),
        ("  answer turn (row updated) p50 / p99 / max µs", TurnTimes.summary(without.answers) + " | " + TurnTimes.summary(with.answers)),
        ("  end turn (run over: WAL synced) p50 / p99 / max µs", TurnTimes.summary(without.ends) + " | " + TurnTimes.summary(with.ends)),
        ("  storm: an event that changes no row, median (µs)", micro(without.stormEvent) + " | " + micro(with.stormEvent)),
        ("  database after", "\(fileSize(HistoryStore.path(in: on)) / 1024) KiB"),
    ]
    func loopJSON(_ times: TurnTimes) -> String {
        "{\"per_call_us\":\(times.meanPerCall * 1e6),\"ring_us\":\(TurnTimes.json(times.rings)),"
            + "\"answer_us\":\(TurnTimes.json(times.answers)),\"end_us\":\(TurnTimes.json(times.ends)),"
            + "\"unchanged_event_us\":\(times.stormEvent * 1e6)}"
    }
    json.append("\"loop\":{\"calls\":\(settings.calls),\"off\":\(loopJSON(without)),\"on\":\(loopJSON(with)),"
                + "\"db_bytes\":\(fileSize(HistoryStore.path(in: on)))}")
}

// MARK: log

/// Wall time of `argv` from spawn to exit, its output thrown away.
func spawnTime(_ argv: [String]) -> Double {
    let start = monotonicNow()
    guard let pid = try? Subprocess.spawn(argv, stdout: .null, stderr: .inherit) else { fail("cannot run \(argv[0])") }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    guard status == 0 else { fail("\(argv.joined(separator: " ")) failed (status \(status))") }
    return monotonicNow() - start
}

if settings.phases.contains("log"), let directory = loopDirectory {
    guard access(settings.telwatch, X_OK) == 0 else {
        fail("no telwatch at \(settings.telwatch): swift build -c release --static-swift-stdlib --product telwatch")
    }
    let base = [settings.telwatch, "log", "--state-dir", directory]
    let cases: [(String, [String])] = [
        ("telwatch --version (spawn baseline)", [settings.telwatch, "--version"]),
        ("telwatch log --limit 20", base + ["--limit", "20"]),
        ("telwatch log --missed --unseen --limit 20", base + ["--missed", "--unseen", "--limit", "20"]),
        ("telwatch log --json --limit 20", base + ["--json", "--limit", "20"]),
        ("telwatch log --number 1004242", base + ["--number", "1004242"]),
    ]
    results.append(("log: over \(settings.calls) calls, ms median / max of \(settings.logRuns)", ""))
    var entries: [String] = []
    for (label, argv) in cases {
        _ = spawnTime(argv)
        let times = (0..<settings.logRuns).map { _ in spawnTime(argv) }
        results.append(("  " + label, "\(format2(percentile(times, 0.5) * 1000)) / \(format2((times.max() ?? 0) * 1000)) ms"))
        entries.append("{\"command\":\"\(argv.dropFirst().joined(separator: " "))\",\"median_ms\":\(percentile(times, 0.5) * 1000),"
                       + "\"max_ms\":\((times.max() ?? 0) * 1000)}")
    }
    // The database's own share: open read-only, read the newest 20, in this process.
    let inProcess = (0..<settings.logRuns).map { _ -> Double in
        let start = monotonicNow()
        guard let reader = try? HistoryReader(path: HistoryStore.path(in: directory)),
              let rows = try? reader.calls(HistoryQuery(limit: 20)), rows.count == 20 else { fail("reading failed") }
        return monotonicNow() - start
    }
    results.append(("  (open + newest 20, in-process)", "\(format2(percentile(inProcess, 0.5) * 1000)) / \(format2((inProcess.max() ?? 0) * 1000)) ms"))
    json.append("\"log\":{\"calls\":\(settings.calls),\"runs\":[\(entries.joined(separator: ","))],"
                + "\"in_process_median_ms\":\(percentile(inProcess, 0.5) * 1000)}")
}
if let loopDirectory { removeTree(loopDirectory) }

// MARK: retention

if settings.phases.contains("retention") {
    let directory = scratch(in: settings.retentionDirectory, "retention")
    defer { removeTree(directory) }
    let day = 86_400.0
    var now = wallClockNow() - Double(settings.years) * 365 * day
    let loop = try EventLoop()
    let sink = HistorySink(settings: HistorySettings(directory: directory, keep: 365 * day), loop: loop,
                           clock: { now }, report: { say("history-bench: the sink said: " + $0, to: 2) })
    let driver = try Daemon(directory: directory, history: sink, loop: loop, now: now)
    let path = HistoryStore.path(in: directory)
    var samples: [String] = []
    var maxBytes = 0
    let started = monotonicNow()
    for dayNumber in 0..<(settings.years * 365) {
        for n in 0..<settings.perDay {
            driver.now = now + Double(n) * (day / Double(settings.perDay))
            _ = driver.call(answered: n % 3 != 0, number: "+1555\(n)")
        }
        now += day
        let (database, wal) = (fileSize(path), fileSize(path + "-wal"))
        maxBytes = max(maxBytes, database + wal)
        if (dayNumber + 1) % 91 == 0 {
            let rows = (try? HistoryReader(path: path)?.summary().calls) ?? -1
            samples.append("{\"day\":\(dayNumber + 1),\"rows\":\(rows),\"db_bytes\":\(database),\"wal_bytes\":\(wal)}")
            results.append(("  day \(dayNumber + 1)", "\(rows) calls, database \(database / 1024) KiB + WAL \(wal / 1024) KiB"))
        }
    }
    driver.finish()
    let index = results.count - samples.count
    results.insert(("retention: \(settings.years) years of \(settings.perDay) calls a day, history-keep 365d "
                    + "(\(settings.retentionDirectory), \(format1(monotonicNow() - started)) s)", "at most \(maxBytes / 1024) KiB in all"),
                   at: index)
    json.append("\"retention\":{\"years\":\(settings.years),\"per_day\":\(settings.perDay),\"max_bytes\":\(maxBytes),"
                + "\"samples\":[\(samples.joined(separator: ","))]}")
}

let width = results.map(\.0.count).max() ?? 0
for (label, value) in results { say(label.padding(to: width + 2) + value) }
say("{" + json.joined(separator: ",") + "}")

extension String {
    func padding(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
