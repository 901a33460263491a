import BGRunManager
import CallMonitor
import Loop

/// Keeps the state directory's `live-calls` record: the calls live at the end of the last turn
/// that changed them, for the next telwatch, killed or not, to go on with under the same ids
/// (`CallMonitor.remembered`, docs/modem-stacks.md §1.8). It writes in the turn's `persist`
/// phase, after the turn's lines, and only in a turn whose calls started, changed state or
/// number, or ended (and once at `ready`, forgetting what the start did not find): one small
/// `pwrite`, never a timer, nothing per signal.
public final class LiveCallRecorder: EventSink, LoopHook {
    private let file: RecordFile
    private weak var loop: EventLoop?
    private let report: (String) -> Void
    /// The live calls, from the tracker.
    private weak var session: SinkSession?
    /// The record as this telwatch last made it, call by call.
    private var record = LiveCallsRecordText()
    /// Whether the file holds `record`'s text; until then (at start, after a failed write) it
    /// holds `left`, when that is known.
    private var inStep = false
    private var left: String?
    private var due = false
    private var failed = false

    /// `left` is the record as this telwatch found it.
    public init(file: RecordFile, left: String, loop: EventLoop, session: SinkSession, report: @escaping (String) -> Void) {
        self.file = file
        self.loop = loop
        self.session = session
        self.report = report
        self.left = left
        loop.addHook(self)
    }

    public func receive(_ delivery: Delivery) {
        switch delivery.event {
        case .calls(let events, _):
            for event in events where !due {
                switch event {
                // A held call resumed, a call ringing out: its state is the same, and so is the record.
                case .transition(let call, let previous) where previous != call.state: due = record.mayHold(call.id)
                case .updated(let call): due = record.mayHold(call.id)
                default: break
                }
            }
        case .ready:
            due = true
        default:
            break
        }
    }

    public var phase: TurnPhase { .persist }

    public func prepare() -> Double? {
        if due { write() }
        return nil
    }

    public func afterWait(now: Double) {}

    /// The calls still live stay recorded: a call outlives its telwatch (the stack keeps it).
    public func finish(then done: @escaping () -> Void) {
        if due { write() }
        loop?.removeHook(self)
        done()
    }

    private func write() {
        due = false
        guard let session, record.update(session.liveCalls) || !inStep else { return }
        let text = record.text
        if !inStep, let left, LiveCallsRecord.same(text, left) {
            inStep = true
            return
        }
        do {
            // The last call ended: an empty record, as the run record is emptied.
            if text.isEmpty { try file.clear() } else { try file.write(text) }
            inStep = true
            left = nil
            if failed { report("live calls: \(file.path) is written again") }
            failed = false
        } catch {
            inStep = false
            left = nil
            if !failed {
                report("live calls: cannot write \(file.path) (\(error)); a call live when telwatch next starts "
                       + "gets a new id")
            }
            failed = true
        }
    }
}

