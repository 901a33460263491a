import BGRunManager
import CallMonitor

/// The link between calls and background runs, as the seed's XKTelManager was: every live call
/// is a holder of the run, so the first ringing or dialing call starts it and the last
/// disconnected call ends it, and every sign of life from a call renews the run's lease.
///
/// Unlike the seed it ignores nothing while a run lives, and a call first seen already connected
/// (telwatch restarted mid-call) holds the run too: any live call keeps the device awake.
/// A call whose run ended by lease expiry joins a new run on its next event: that event shows
/// the call is not stuck after all.
public final class TelManager: EventSink {
    private let runs: BGRunManager?
    /// Calls seen live and not yet disconnected.
    public private(set) var liveCallIDs: Set<String> = []
    /// The run each call held at its latest event ("" for none); an ended call's entry lasts
    /// until the next batch, so that sinks after this one can still ask.
    private var runOfCall: [String: String] = [:]
    private var endedInBatch: [String] = []

    public init(runs: BGRunManager?) {
        self.runs = runs
    }

    /// The run `callID` held at its latest event, also when that event ended it; nil for none.
    public func runID(heldBy callID: String) -> String? {
        guard let id = runOfCall[callID], !id.isEmpty else { return nil }
        return id
    }

    public func receive(_ event: PipelineEvent, liveCalls: Int) {
        guard case .calls(let events, _) = event else { return }
        handle(events)
    }

    /// Handles what one `CallTracker.apply` returned.
    public func handle(_ events: [TrackerEvent]) {
        for id in endedInBatch { runOfCall.removeValue(forKey: id) }
        endedInBatch.removeAll()
        for event in events {
            switch event {
            case .announced(let key):
                // The lock is taken on the stack's word that a call exists, before its state is read.
                runs?.join(TelManager.holder(announced: key), reason: "announced")
            case .withdrawn(let key):
                runs?.leave(TelManager.holder(announced: key))
            case .transition(let call, let previous):
                if previous == nil, let runs, runs.holders.contains(TelManager.holder(announced: call.key)) {
                    // The announced call is known now: it holds the run itself, with no gap.
                    if call.state != .disconnected { runs.join(call.id, reason: call.state.rawValue) }
                    runs.leave(TelManager.holder(announced: call.key))
                }
                if call.state == .disconnected {
                    // The run the call belonged to, also when its leaving ends that run.
                    runOfCall[call.id] = runs?.run?.id ?? ""
                    endedInBatch.append(call.id)
                    liveCallIDs.remove(call.id)
                    runs?.leave(call.id)
                } else {
                    liveCallIDs.insert(call.id)
                    // Joins at first sight, renews the lease on every later change.
                    runs?.join(call.id, reason: call.state.rawValue)
                    runOfCall[call.id] = runs?.run?.id ?? ""
                }
            case .updated(let call):
                if liveCallIDs.contains(call.id) { runs?.join(call.id, reason: call.state.rawValue) }
                runOfCall[call.id] = runs?.run?.id ?? ""
            case .missed:
                break
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

    /// The run holder of a call object announced but not read yet.
    static func holder(announced key: CallKey) -> String {
        "announced:" + key.backend.rawValue + ":" + key.path
    }

    /// The live run ends (reason `shutdown`); `done` runs once its command and every hook have
    /// finished (bounded, see `BGRunManager.shutdown`).
    public func finish(then done: @escaping () -> Void) {
        guard let runs else { return done() }
        runs.shutdown(then: done)
    }
}
