import BGRunManager
import CallMonitor

/// What a sink may ask of the session it runs in, by name (docs/ARCHITECTURE.md, "Sinks"): a few
/// narrow questions, answered by whoever knows, and one way to say something to the other sinks,
/// as a pipeline event. No sink is handed another sink, and none gets closures wired in from outside.
public protocol SinkSession: AnyObject {
    /// The live calls as the tracker has them, first seen first.
    var liveCalls: [CallSnapshot] { get }
    /// The run `callID` held at its latest event, also when that event ended it; nil for none
    /// (`TelManager`'s, which comes before every sink that asks).
    func runID(heldBy callID: String) -> String?
    /// The live run: its id and how many hold it (nil while none lives).
    var liveRun: (id: String, holders: Int)? { get }
    /// The live run as the run manager records it (the D-Bus API's `Run`): read when asked.
    var runRecord: RunRecord? { get }
    /// This telwatch's state directory (run record, history), nil without one.
    var stateDirectory: String? { get }
    /// What screening does to a live call; nil when no rule (and no `Silence`) spoke of it.
    func screening(of callID: String) -> ScreeningAction?
    /// Stops a live call's ring at the user's word (D-Bus `Silence`, MQTT `silence`): said to
    /// every sink with a `screened` event.
    func silence(callID: String) -> SilenceOutcome
    /// The call history's missed calls not marked seen, as of the events delivered so far (those
    /// of this turn included, written or not); nil without a history, or while it cannot count
    /// them. Asked in the turn's `publish` phase (MQTT's retained state): no sink sends it back.
    func missedUnseen() -> Int?
    /// Sends an event into the pipeline, after the one being delivered (the pipeline's FIFO).
    func send(_ event: PipelineEvent)

    // Acts on calls (docs/modem-stacks.md §13), for whoever asked (`by`). Each says what came of
    // it to every sink with an `acted` event, then calls `done` once, on the loop's thread: at
    // once when the act is refused before the stack, else when the stack has answered.

    /// Does `act` to the live call `callID` (the event stream's `call_id`).
    func act(_ act: CallAct, on callID: String, by: ActRequester, done: @escaping (CallActReport) -> Void)
    /// Places a call to `number` on `modem` (nil: the only voice modem).
    func dial(_ number: String, modem: String?, by: ActRequester, done: @escaping (CallActReport) -> Void)
    /// `act`, for a local program whose uid is known (the D-Bus caller's): the event records it.
    func act(_ act: CallAct, on callID: String, by: ActRequester, uid: UInt32?,
             done: @escaping (CallActReport) -> Void)
    /// `dial`, for a local program whose uid is known.
    func dial(_ number: String, modem: String?, by: ActRequester, uid: UInt32?,
              done: @escaping (CallActReport) -> Void)
}

extension SinkSession {
    /// A session that records no uid (a test's) acts as without one.
    public func act(_ act: CallAct, on callID: String, by: ActRequester, uid: UInt32?,
                    done: @escaping (CallActReport) -> Void) {
        self.act(act, on: callID, by: by, done: done)
    }

    public func dial(_ number: String, modem: String?, by: ActRequester, uid: UInt32?,
                     done: @escaping (CallActReport) -> Void) {
        dial(number, modem: modem, by: by, done: done)
    }
}
