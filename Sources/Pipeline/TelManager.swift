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
    /// What is kept of a call, by id: one entry, so that a call's event finds it once.
    private struct Held {
        /// Seen live and not yet disconnected.
        var live: Bool
        /// The run the call held at its latest event ("" for none); an ended call's lasts until
        /// the next batch, so that sinks after this one can still ask.
        var run: String?
    }
    private var calls: [String: Held] = [:]
    private var endedInBatch: [String] = []

    /// Calls seen live and not yet disconnected.
    public var liveCallIDs: Set<String> { Set(calls.filter { $0.value.live }.map(\.key)) }

    public init(runs: BGRunManager?) {
        self.runs = runs
    }

    /// The run `callID` held at its latest event, also when that event ended it; nil for none.
    public func runID(heldBy callID: String) -> String? {
        guard let id = calls[callID]?.run, !id.isEmpty else { return nil }
        return id
    }

    /// The run live now, as a call's entry keeps it ("" for none).
    private var currentRun: String { runs?.run?.id ?? "" }

    /// Sets what is kept of `id`; a call neither live nor asked about is forgotten.
    /// `run`: `.some(nil)` forgets the run; `nil` leaves it as it is.
    private func keep(_ id: String, live: Bool? = nil, run: String?? = nil) {
        if let index = calls.index(forKey: id) {
            if let live { calls.values[index].live = live }
            if let run { calls.values[index].run = run }
            if !calls.values[index].live && calls.values[index].run == nil { calls.remove(at: index) }
        } else if live == true || (run ?? nil) != nil {
            calls[id] = Held(live: live ?? false, run: run ?? nil)
        }
    }

    public func receive(_ delivery: Delivery) {
        guard case .calls(let events, let time) = delivery.event else { return }
        handle(events, at: time)
    }

    /// Handles what one `CallTracker.apply` returned at `time`: a run its calls start or end
    /// starts or ends at their events' own time.
    public func handle(_ events: [TrackerEvent], at time: Double) {
        for id in endedInBatch { keep(id, run: .some(nil)) }
        endedInBatch.removeAll()
        for event in events {
            switch event {
            case .announced(_, let id):
                // The lock is taken on the stack's word that a call exists, before its state is
                // read; the call keeps its id, and so its hold, once it is.
                runs?.join(id, reason: TelManager.newCallReason, at: time)
                keep(id, run: currentRun)
            case .withdrawn(_, let id):
                runs?.leave(id, at: time)
                keep(id, run: .some(nil))
            case .transition(let call, _):
                if call.state == .disconnected {
                    // The run the call belonged to, also when its leaving ends that run.
                    keep(call.id, live: false, run: currentRun)
                    endedInBatch.append(call.id)
                    runs?.leave(call.id, at: time)
                } else {
                    // Joins at first sight, renews the lease on every later change.
                    runs?.join(call.id, reason: call.state.rawValue, at: time)
                    keep(call.id, live: true, run: currentRun)
                }
            case .updated(let call):
                if calls[call.id]?.live == true { runs?.join(call.id, reason: call.state.rawValue, at: time) }
                keep(call.id, run: currentRun)
            case .missed:
                break
            case .busy(let call):
                // Its first sight already joined it; this only mends a run that missed that.
                if let runs, calls[call.id]?.live == true, !runs.holders.contains(call.id) {
                    runs.join(call.id, reason: call.state.rawValue, at: time)
                }
            case .idle:
                // Every call has ended: whatever still holds the run is left over.
                for (id, held) in calls where held.live { runs?.leave(id) }
                for id in calls.keys { keep(id, live: false) }
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
