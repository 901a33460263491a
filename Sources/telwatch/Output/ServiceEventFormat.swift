import BGRunManager
import CallMonitor
import Pipeline

/// Run and sleep events and backend notices as text lines for people, and the warnings among
/// them as stderr lines (programs read the JSON: `EventSchema`). Which events are warnings is
/// the events' own `isWarning`; this only words them.
enum ServiceEventFormat {
    static func text(_ event: RunEvent) -> String {
        let time = Timestamp.localClock(event.time)
        let name = event.name.padded(to: 12)
        switch event.kind {
        case .started(let run):
            let call = run.reason == TelManager.newCallReason ? "a new call" : "\(TerminalText.field(run.reason)) call"
            return "\(time) \(name) \(short(run.id)) for \(call) \(short(run.firstHolder))"
        case .stopped(let run, let reason, let duration):
            return "\(time) \(name) \(short(run.id)) after \(Duration.text(duration)) (\(reason.rawValue))"
        case .expired(let run, let duration):
            return "\(time) \(name) \(short(run.id)) after \(Duration.text(duration)): the lease ran out"
        case .lockTaken(let request), .lockRetaken(let request):
            return "\(time) \(name) \(TerminalText.field(request.what)) (\(TerminalText.field(request.mode)))"
        case .heartbeat(let runID, let count, let elapsed):
            return "\(time) \(name) \(short(runID)) #\(count) after \(Duration.text(elapsed))"
        default:
            let fields = event.fields.map { "\($0.key)=\(fieldText($0.value))" }.joined(separator: " ")
            return "\(time) \(name) \(fields)"
        }
    }

    /// An id's first 8 characters, escaped: `events` reads ids from the bus as text.
    private static func short(_ id: String) -> String { TerminalText.field(String(id.prefix(8))) }

    /// Events a user sees in text mode at normal verbosity; the rest with --verbose (JSON has all).
    static func isShownByDefault(_ event: RunEvent) -> Bool {
        switch event.kind {
        case .started, .stopped, .expired, .lockRetaken: return true
        default: return false
        }
    }

    /// The stderr line of a run event whose `isWarning` holds.
    static func warning(_ event: RunEvent) -> String {
        switch event.kind {
        case .lockUnavailable(let why): return "nothing keeps the device awake during this run: \(why)"
        case .wakelockUnavailable(let why): return "no kernel wakelock: \(why)"
        case .wakelockReleaseFailed(let why): return "the kernel wakelock could not be released: \(why)"
        case .timerUnavailable(let why): return "run: \(why)"
        case .runCommandFailed(let why): return "the run command could not start: \(why)"
        case .runCommandExited(let pid, let status, _): return "the run command (pid \(pid)) \(status) while the run went on"
        case .staleRunRecovered(let record):
            return "a run left open by telwatch pid \(record.pid) (started \(Timestamp.localClock(record.startedAt)), "
                + "\(record.reason)) was closed; its run-stopped hooks run with reason stale"
        case .staleCommandStopped(let pid):
            return "the run command of that run (pid \(pid)) was still running; it was stopped"
        case .stateError(let why): return "state directory: \(why)"
        default: return "\(event.name): " + event.fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    /// A typed field as a word in a `key=value` line: escaped, never empty.
    static func fieldText(_ value: FieldValue) -> String {
        switch value {
        case .seconds(let seconds): return seconds.map(Duration.text).map(TerminalText.field) ?? "-"
        case .time(let time): return time.map(Timestamp.localClock) ?? "-"
        default: return TerminalText.field(value.description)
        }
    }

    // MARK: Sleep and resume

    static func text(_ event: SleepEvent, liveCalls: Int) -> String? {
        let time = Timestamp.localClock(event.time)
        let name = event.name.padded(to: 12)
        switch event.kind {
        case .sleep(let runID, _):
            let calls = liveCalls == 0 ? "no call live" : "\(liveCalls) call\(liveCalls == 1 ? "" : "s") live"
            return "\(time) \(name) the system is going to sleep (\(calls)\(runID.map { ", run \(short($0))" } ?? ""))"
        case .resume(let asleepFor):
            let slept = asleepFor.map { "after \(Duration.text($0)) asleep" } ?? "(its sleep was not seen)"
            return "\(time) \(name) the system is awake \(slept); reading every call again"
        case .overridden(let runID, let lock, let inhibit, _):
            return "\(time) \(name) run \(short(runID)) was live (lock \(TerminalText.field(inhibit)), \(lock))"
        case .lockTaken(_, let request, let seconds):
            return "\(time) \(name) \(TerminalText.field(request.what)) (\(TerminalText.field(request.mode)))" + (seconds.map { " for \(Duration.text($0))" } ?? "")
        case .lockReleased(let role, let expired):
            return "\(time) \(name) " + (expired ? "its time is up" : role == .delay ? "the sleep may go on" : "given up")
        case .signalIgnored, .malformedSignal:
            return nil
        default:
            let fields = event.fields.map { "\($0.key)=\(fieldText($0.value))" }.joined(separator: " ")
            return "\(time) \(name) \(fields)"
        }
    }

    /// Sleep events a user sees in text mode at normal verbosity; the lock events with --verbose.
    static func isShownByDefault(_ event: SleepEvent) -> Bool {
        switch event.kind {
        case .sleep, .resume, .overridden: return true
        default: return false
        }
    }

    /// The stderr line of a sleep event whose `isWarning` holds.
    static func warning(_ event: SleepEvent) -> String {
        switch event.kind {
        case .overridden(let runID, let lock, let inhibit, let holders):
            let calls = "\(holders) call\(holders == 1 ? "" : "s") live, run \(runID.prefix(8))"
            if lock == .held {
                return "the system went to sleep with \(calls): logind overrode its \(inhibit) lock "
                    + "(a forced suspend, or a lid switch that ignores inhibitors: LidSwitchIgnoreInhibited=)"
            }
            return "the system went to sleep with \(calls): nothing blocked it (lock \(inhibit), \(lock))"
        case .lockUnavailable(let role, let why):
            return role == .delay ? "no sleep delay lock: the sleep may come before telwatch records it: \(why)"
                : "no grace lock after the resume: the system may sleep again at once: \(why)"
        case .signalIgnored(let sender, let suppressed):
            return "ignored PrepareForSleep from \(sender): not the owner of org.freedesktop.login1"
                + (suppressed > 0 ? " (and \(suppressed) more not shown)" : "")
        case .malformedSignal(let signature):
            return "skipped: PrepareForSleep from logind with signature '\(signature)'"
        case .stateError(let why): return "state directory: \(why)"
        default: return event.name
        }
    }

    // MARK: Backend notices

    static func text(_ notice: BackendNotice, time: Double) -> String? {
        guard let status = notice.status else { return nil }
        let head = "\(Timestamp.localClock(time)) \(notice.backend.rawValue.padded(to: 12))"
        switch notice {
        case .serviceAppeared(_, let owner): return "\(head) running as \(TerminalText.field(owner))"
        case .serviceVanished(_, let live): return "\(head) stopped" + (live == 0 ? "" : ": its live calls ended (backend-lost)")
        case .serviceAbsent: return "\(head) not running; waiting for it"
        case .synced(_, let modems, let calls):
            return "\(head) synced: \(modems) voice modem\(modems == 1 ? "" : "s"), \(calls) call\(calls == 1 ? "" : "s") listed"
        default: return "\(head) \(status.rawValue)"
        }
    }
}
