import BGRunManager
import CallMonitor

/// The link between calls and background runs: every live call is a holder of the run, so the
/// first ringing or dialing call starts it and the last disconnected call ends it, and every sign
/// of life from a call renews the run's lease.
///
/// It ignores nothing while a run lives, and a call first seen already connected
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

    public func receive(_ delivery: Delivery) {
        guard case .calls(let events, let time) = delivery.event else { return }
        handle(events, at: time)
    }

    /// Handles what one `CallTracker.apply` returned at `time`: a run its calls start or end
    /// starts or ends at their events' own time.
    public func handle(_ events: [TrackerEvent], at time: Double) {
        for id in endedInBatch { runOfCall.removeValue(forKey: id) }
        endedInBatch.removeAll()
        for event in events {
            switch event {
            case .announced(_, let id):
                // The lock is taken on the stack's word that a call exists, before its state is
                // read; the call keeps its id, and so its hold, once it is.
                runs?.join(id, reason: TelManager.newCallReason, at: time)
                runOfCall[id] = runs?.run?.id ?? ""
            case .withdrawn(_, let id):
                runs?.leave(id, at: time)
                runOfCall.removeValue(forKey: id)
            case .transition(let call, _):
                if call.state == .disconnected {
                    // The run the call belonged to, also when its leaving ends that run.
                    runOfCall[call.id] = runs?.run?.id ?? ""
                    endedInBatch.append(call.id)
                    liveCallIDs.remove(call.id)
                    runs?.leave(call.id, at: time)
                } else {
                    liveCallIDs.insert(call.id)
                    // Joins at first sight, renews the lease on every later change.
                    runs?.join(call.id, reason: call.state.rawValue, at: time)
                    runOfCall[call.id] = runs?.run?.id ?? ""
                }
            case .updated(let call):
                if liveCallIDs.contains(call.id) { runs?.join(call.id, reason: call.state.rawValue, at: time) }
                runOfCall[call.id] = runs?.run?.id ?? ""
            case .missed:
                break
            case .busy(let call):
                // Its first sight already joined it; this only mends a run that missed that.
                if let runs, liveCallIDs.contains(call.id), !runs.holders.contains(call.id) {
                    runs.join(call.id, reason: call.state.rawValue, at: time)
                }
            case .idle:
                // Every call has ended: whatever still holds the run is left over.
                for id in liveCallIDs { runs?.leave(id) }
                liveCallIDs.removeAll()
            }
        }
    }

    /// Why a run started when its first call was announced before its state was known.
    public static let newCallReason = "new-call"

    /// The live run ends (reason `shutdown`); `done` runs once its command and every hook have
    /// finished (bounded, see `BGRunManager.shutdown`).
    public func finish(then done: @escaping () -> Void) {
        guard let runs else { return done() }
        runs.shutdown(then: done)
    }
}
