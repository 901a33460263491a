import BGRunManager
import CallMonitor
import Processes

/// Everything that flows through the pipeline, in the order it happened.
public enum PipelineEvent {
    /// What one backend event did to the calls, in the tracker's order: a call's `disconnected`
    /// comes with its `missed` and the `idle` edge in one batch. `time` is when it was seen.
    case calls([TrackerEvent], time: Double)
    /// Screening decided about a call (docs/screening.md): right after the events that made its
    /// number known, before anything else happens to it; again if its hang-up failed.
    case screened(ScreenedCall, time: Double)
    case run(RunEvent)
    case sleep(SleepEvent)
    case backend(BackendNotice, time: Double)
    /// Every selected stack has been read once (or is known to be absent).
    case ready(time: Double)
    /// A hook finished, successfully or not.
    case hook(HookOutcome)
    /// Counters, on request (SIGUSR1) and at exit.
    case stats(ServiceStats)
    /// An act on a call, or a dial, asked for by someone (`SinkSession.act`, `dial`), and what
    /// came of it: sent once the stack answered, or once telwatch refused it.
    case acted(ActedCall, time: Double)
}

extension PipelineEvent {
    /// When it happened, as the event itself carries it: what a sink stamps (MQTT's outbox)
    /// instead of reading the clock again. A hook's outcome happened as the hook ended.
    public var time: Double {
        switch self {
        case .calls(_, let time), .screened(_, let time), .backend(_, let time), .ready(let time), .acted(_, let time):
            return time
        case .run(let run): return run.time
        case .sleep(let sleep): return sleep.time
        case .hook(let outcome): return outcome.startedAt + outcome.duration
        case .stats(let stats): return stats.time
        }
    }
}

/// The service's counters at one moment.
public struct ServiceStats: Equatable, Sendable {
    public enum Occasion: String, Sendable {
        /// Asked for with SIGUSR1.
        case stats
        /// The last line before telwatch exits.
        case exit
    }

    public var occasion: Occasion
    public var time: Double
    /// Signals decoded from the stacks' owners since the start.
    public var signals: UInt64
    public var uptime: Double

    public init(occasion: Occasion, time: Double, signals: UInt64, uptime: Double) {
        self.occasion = occasion
        self.time = time
        self.signals = signals
        self.uptime = uptime
    }
}

/// One consumer of the pipeline's events: output, runs, hooks, and whatever comes next. A sink
/// has one job; it never calls back into whoever produced an event. What it causes (a run event,
/// a hook outcome) is sent into the pipeline by its producer and reaches every sink after the
/// event that caused it.
public protocol EventSink: AnyObject {
    /// One event, as stamped at the pipeline's entrance (`Delivery`).
    func receive(_ delivery: Delivery)
    /// telwatch is stopping: finish what was started, then call `done` once (within a bound the
    /// sink documents). Events may still arrive (the run's end, the exit line).
    func finish(then done: @escaping () -> Void)
}

extension EventSink {
    public func finish(then done: @escaping () -> Void) { done() }
}
