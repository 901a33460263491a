import BGRunManager
import CallMonitor
import Pipeline

/// The session of a test that makes sinks without a watch session: the questions the test cares
/// about (the live calls, which run a call held) are answered by closures, every other with
/// "none". A sink holds its session weakly: the test keeps this one for as long as the sink lives.
final class StubSession: SinkSession {
    private let calls: () -> [CallSnapshot]
    private let heldRun: (String) -> String?

    init(liveCalls: @escaping () -> [CallSnapshot] = { [] }, runID: @escaping (String) -> String? = { _ in nil }) {
        calls = liveCalls
        heldRun = runID
    }

    var liveCalls: [CallSnapshot] { calls() }
    func runID(heldBy callID: String) -> String? { heldRun(callID) }
    var liveRun: (id: String, holders: Int)? { nil }
    var runRecord: RunRecord? { nil }
    var stateDirectory: String? { nil }
    func screening(of callID: String) -> ScreeningAction? { nil }
    func silence(callID: String) -> SilenceOutcome { .noSuchCall }
    func act(_ act: CallAct, on callID: String, by: ActRequester, done: @escaping (CallActReport) -> Void) {
        done(CallActReport(.failure(.noSuchCall)))
    }
    func dial(_ number: String, modem: String?, by: ActRequester, done: @escaping (CallActReport) -> Void) {
        done(CallActReport(.failure(.stackGone)))
    }
    func missedUnseen() -> Int? { nil }
    func send(_ event: PipelineEvent) {}
}
