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
    /// Tones the far end pressed on a call, paced per call (docs/modem-stacks.md §14); `time` is
    /// when the first of them was heard.
    case tones(HeardTones, time: Double)
    /// An act on a call, or a dial, asked for by someone (`SinkSession.act`, `dial`), and what
    /// came of it: sent once the stack answered, or once telwatch refused it.
    case acted(ActedCall, time: Double)
}

extension PipelineEvent {
    /// When it happened, as the event itself carries it: what a sink stamps (MQTT's outbox)
    /// instead of reading the clock again. A hook's outcome happened as the hook ended.
    public var time: Double {
        switch self {
        case .calls(_, let time), .screened(_, let time), .backend(_, let time), .ready(let time),
             .tones(_, let time), .acted(_, let time):
            return time
        case .run(let run): return run.time
        case .sleep(let sleep): return sleep.time
        case .hook(let outcome): return outcome.startedAt + outcome.duration
        case .stats(let stats): return stats.time
        }
    }
}
