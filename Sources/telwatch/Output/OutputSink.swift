import BGRunManager
import CallMonitor
import Loop
import Pipeline

/// The event stream on stdout: one line per event, JSON Lines for programs (every event) or text
/// for people (what `verbosity` shows). Each line goes out in one write, at once.
final class OutputSink: EventSink, LoopHook {
    private let output: LineWriter
    private let json: Bool
    /// What is shown, and whether numbers are redacted, change with a reloaded configuration.
    var verbosity: WatchOptions.Verbosity
    var schema: EventSchema {
        didSet { callFormat = CallEventFormat(schema: schema) }
    }
    private var callFormat: CallEventFormat
    /// The reader went away (`telwatch | head`): the session should stop.
    private let onBroken: () -> Void

    init(output: LineWriter, json: Bool, verbosity: WatchOptions.Verbosity, schema: EventSchema,
         onBroken: @escaping () -> Void = {}) {
        self.output = output
        self.onBroken = onBroken
        self.json = json
        self.verbosity = verbosity
        self.schema = schema
        callFormat = CallEventFormat(schema: schema)
    }

    func receive(_ delivery: Delivery) {
        if json {
            for object in delivery.records { write(object) }
            return
        }
        let liveCalls = delivery.liveCalls
        switch delivery.event {
        case .calls(let events, let time):
            for call in events {
                let contact = call.call.flatMap { delivery.contact(of: $0.number) }
                if let line = callFormat.text(call, time: time, contact: contact) { write(line) }
            }
        case .screened(let screened, let time):
            write(callFormat.text(screened, time: time))
        case .acted(let acted, let time):
            write(callFormat.text(acted, time: time))
        case .run(let run):
            if shows(byDefault: ServiceEventFormat.isShownByDefault(run)) { write(ServiceEventFormat.text(run)) }
        case .sleep(let sleep):
            if shows(byDefault: ServiceEventFormat.isShownByDefault(sleep)),
               let line = ServiceEventFormat.text(sleep, liveCalls: liveCalls) {
                write(line)
            }
        case .backend(let notice, let time):
            if verbosity != .quiet, let line = ServiceEventFormat.text(notice, time: time) { write(line) }
        case .stats(let stats) where stats.occasion == .stats:
            // Asked for on purpose (SIGUSR1): said on stderr, out of the way of the text stream.
            var object = JSONObject()
            schema.write(stats, liveCalls: liveCalls, into: &object)
            warn(object.line, priority: .info)
        case .ready, .stats, .hook:
            break
        }
    }

    /// From now on the lines of a loop turn go out together, just before the loop waits.
    func holdLinesForEachTurn(of loop: EventLoop) {
        output.holdsLines = true
        loop.addHook(self)
    }

    /// Writes what is held (the loop is about to wait, or telwatch to exit).
    func flush() {
        output.flush()
        if output.isBroken { onBroken() }
    }

    var phase: TurnPhase { .print }

    func prepare() -> Double? {
        flush()
        return nil
    }

    func afterWait(now: Double) {}

    private func shows(byDefault: Bool) -> Bool {
        verbosity == .verbose || (verbosity == .normal && byDefault)
    }

    private func write(_ object: JSONObject) {
        output.write(line: object.lineBytes)
        if output.isBroken { onBroken() }
    }

    private func write(_ line: String) {
        output.write(JournalStream.isStdout ? JournalStream.line(line, priority: .info) : line)
        if output.isBroken { onBroken() }
    }
}

