import BGRunManager
import DBus

/// The link between calls and background runs, as the seed's XKTelManager was (design.md §1):
/// it consumes the tracker's events, makes every live call a holder of the run (so the first
/// ringing or dialing call starts it and the last disconnected call ends it), renews the run's
/// lease on every sign of life from a call, and runs the hooks of every call event.
///
/// Unlike the seed it ignores nothing while a run lives, and a call first seen already connected
/// (telwatch restarted mid-call) holds the run too: any live call keeps the device awake.
/// A call whose run ended by lease expiry joins a new run on its next event: that event shows
/// the call is not stuck after all.
///
/// Call hooks run under the call's id as ordering key, so one call's hooks run in order while
/// different calls' hooks run side by side. Their environment:
/// `TELWATCH_EVENT` (incoming, dialing, connected, disconnected, missed, updated),
/// `TELWATCH_CALL_ID`, `TELWATCH_STATE`, `TELWATCH_PREVIOUS_STATE` ("" at first sight),
/// `TELWATCH_DETAIL` (ringing, waiting, dialing, alerting, active, held; "" once disconnected),
/// `TELWATCH_DIRECTION`, `TELWATCH_NUMBER`, `TELWATCH_NAME`, `TELWATCH_REASON`,
/// `TELWATCH_BACKEND`, `TELWATCH_MODEM`, `TELWATCH_PATH`, `TELWATCH_INITIAL` and
/// `TELWATCH_MISSED`, `TELWATCH_MULTIPARTY` and `TELWATCH_RESUMED` (`true`/`false`; resumed: learned by
/// the resync after a resume, not as it happened), `TELWATCH_LIVE_CALLS` (after
/// this event), `TELWATCH_RUN_ID` (the run the call holds or held; "" for none), `TELWATCH_TIME` (epoch seconds).
public final class TelManager {
    private let runs: BGRunManager?
    private let hooks: HookRunner?
    private let clock: () -> Double
    /// Calls seen live and not yet disconnected.
    public private(set) var liveCallIDs: Set<String> = []
    private var isShuttingDown = false

    public init(runs: BGRunManager?, hooks: HookRunner?, clock: @escaping () -> Double = wallClockNow) {
        self.runs = runs
        self.hooks = hooks
        self.clock = clock
    }

    /// Handles what one `CallTracker.apply` returned. A batch is needed to tell, at a call's
    /// `disconnected`, whether the tracker also called it missed.
    public func handle(_ events: [TrackerEvent]) {
        var missed: Set<String> = []
        for case .missed(let call) in events { missed.insert(call.id) }
        var ended: [String: (previous: CallState?, runID: String?)] = [:]
        for event in events {
            switch event {
            case .transition(let call, let previous):
                // The run the call belonged to, also when its leaving ends that run.
                var runID = runs?.run?.id
                if call.state == .disconnected {
                    liveCallIDs.remove(call.id)
                    runs?.leave(call.id)
                    ended[call.id] = (previous, runID)
                } else {
                    liveCallIDs.insert(call.id)
                    // Joins at first sight, renews the lease on every later change.
                    runs?.join(call.id, reason: call.state.rawValue)
                    runID = runs?.run?.id
                }
                runHooks(call.state.rawValue, call, previous: previous, missed: missed.contains(call.id), runID: runID)
            case .updated(let call):
                if liveCallIDs.contains(call.id) { runs?.join(call.id, reason: call.state.rawValue) }
                runHooks("updated", call, previous: call.state, missed: false, runID: runs?.run?.id)
            case .missed(let call):
                runHooks("missed", call, previous: ended[call.id]?.previous, missed: true, runID: ended[call.id]?.runID)
            case .busy(let call):
                // Its first sight already joined it; this only mends a run that missed that.
                if let runs, liveCallIDs.contains(call.id), !runs.holders.contains(call.id) {
                    runs.join(call.id, reason: call.state.rawValue)
                }
            case .idle:
                // Every call has ended: whatever still holds the run is left over.
                for id in liveCallIDs { runs?.leave(id) }
                liveCallIDs.removeAll()
            }
        }
    }

    public func handle(_ event: TrackerEvent) { handle([event]) }

    /// telwatch is stopping: no more hooks for calls; the live run ends (reason `shutdown`) and
    /// `done` runs once its command and every hook have finished (bounded, see `BGRunManager`).
    public func shutdown(then done: @escaping () -> Void) {
        isShuttingDown = true
        if let runs {
            runs.shutdown(then: done)
        } else if let hooks {
            hooks.whenIdle(done)
        } else {
            done()
        }
    }

    private func runHooks(_ event: String, _ call: CallSnapshot, previous: CallState?, missed: Bool, runID: String?) {
        guard let hooks, !isShuttingDown else { return }
        hooks.run(event: event, key: call.id, variables: [
            ("TELWATCH_CALL_ID", call.id),
            ("TELWATCH_STATE", call.state.rawValue),
            ("TELWATCH_PREVIOUS_STATE", previous?.rawValue ?? ""),
            ("TELWATCH_DETAIL", call.detail?.rawValue ?? ""),
            ("TELWATCH_DIRECTION", call.direction.rawValue),
            ("TELWATCH_NUMBER", call.number),
            ("TELWATCH_NAME", call.name),
            ("TELWATCH_REASON", call.reason ?? ""),
            ("TELWATCH_BACKEND", call.key.backend.rawValue),
            ("TELWATCH_MODEM", call.modem),
            ("TELWATCH_PATH", call.key.path),
            ("TELWATCH_INITIAL", call.initial ? "true" : "false"),
            ("TELWATCH_MISSED", missed ? "true" : "false"),
            ("TELWATCH_MULTIPARTY", call.multiparty ? "true" : "false"),
            ("TELWATCH_RESUMED", call.resumed ? "true" : "false"),
            ("TELWATCH_LIVE_CALLS", String(liveCallIDs.count)),
            ("TELWATCH_RUN_ID", runID ?? ""),
            ("TELWATCH_TIME", formatSeconds(clock())),
        ])
    }
}
