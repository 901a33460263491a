import BGRunManager
import Loop
import Pipeline

/// Tells the service manager (systemd's `Type=notify`, docs/packaging.md) what the daemon is doing:
/// `READY=1` once every selected stack has been read once (the `ready` event, so a unit ordered
/// after telwatch starts when calls are already being followed), `STATUS=` with the live calls and
/// the run whenever that text changes, `STOPPING=1` as the stop begins, and `WATCHDOG=1` pings
/// only when the manager asked for a watchdog (`WATCHDOG_USEC`): its timer exists only then.
/// Placed right after the output sinks, so its `finish` (the stop) comes before the run is ended.
final class ServiceManagerSink: EventSink {
    private let notifier: ServiceNotifier
    private var watchdog: TimerSource?
    private var isReady = false
    /// Once the stop has begun the status stays "stopping", whatever the run's end changes.
    private var isStopping = false
    private var runID: String?
    private var liveCalls = 0
    private var lastStatus = ""

    /// nil when no service manager listens (`NOTIFY_SOCKET` unset): then nothing is armed.
    /// Throws when the watchdog asked for cannot be armed: the start fails with the reason, where
    /// telwatch running on would be killed at `WatchdogSec` without a word.
    static func fromEnvironment(loop: EventLoop) throws -> ServiceManagerSink? {
        guard let notifier = ServiceNotifier.fromEnvironment() else { return nil }
        return try ServiceManagerSink(notifier: notifier, watchdogInterval: ServiceNotifier.watchdogInterval(), loop: loop)
    }

    init(notifier: ServiceNotifier, watchdogInterval: Double?, loop: EventLoop) throws {
        self.notifier = notifier
        if let interval = watchdogInterval {
            // Pinged at half the interval, the margin sd_watchdog_enabled(3) recommends.
            do {
                watchdog = try loop.timer { [notifier] in notifier.send(["WATCHDOG=1"]) }
            } catch {
                throw StartFailure("cannot arm the service manager's watchdog (WATCHDOG_USEC): \(error)")
            }
            watchdog?.schedule(after: interval / 2, repeating: interval / 2)
        }
    }

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    func receive(_ delivery: Delivery) {
        liveCalls = delivery.liveCalls
        switch delivery.event {
        case .ready:
            isReady = true
            lastStatus = status
            notifier.send(["READY=1", "STATUS=" + lastStatus])
            return
        case .run(let run):
            switch run.kind {
            case .started(let info): runID = info.id
            case .stopped: runID = nil
            default: break
            }
        default: break
        }
        guard isReady, !isStopping, status != lastStatus else { return }
        lastStatus = status
        notifier.send(["STATUS=" + lastStatus])
    }

    func finish(then done: @escaping () -> Void) {
        isStopping = true
        notifier.send(["STOPPING=1", "STATUS=stopping: ending the run, waiting for hooks"])
        watchdog?.cancel()
        watchdog = nil
        done()
    }

    /// Everything is released: the status is cleared (an empty `STATUS=`), else `systemctl status`
    /// would go on showing "stopping: …" long after the stop, beside systemd's own "inactive".
    func stopped() {
        notifier.send(["STATUS="])
    }

    /// What `systemctl status telwatch` shows: `1 call live, run 1a2b3c4d held`.
    private var status: String {
        let calls = liveCalls == 0 ? "no call live" : liveCalls == 1 ? "1 call live" : "\(liveCalls) calls live"
        return calls + ", " + (runID.map { "run \($0.prefix(8)) held" } ?? "no run")
    }
}
