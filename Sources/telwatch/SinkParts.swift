import BGRunManager
import Contacts
import Loop
import Pipeline
import Processes

/// What a sink of the watch pipeline is made from: the options, the session's parts (made
/// before any sink) and the session's questions (`SinkSession`), which every sink gets as it is
/// made. Nothing is handed to a sink after that.
struct SinkParts {
    let options: WatchOptions
    let loop: EventLoop
    /// stdout, for the event stream.
    let output: LineWriter
    let contacts: ContactDirectory?
    let hooks: HookRunner
    /// The run manager (nil when it could not start); its state directory holds the outbox, the
    /// live calls' record and the history.
    let runs: BGRunManager?
    /// The D-Bus API's connection, its name already claimed; nil with `--no-api`.
    let api: APIService?
    /// The live calls' record as this telwatch found it (what an earlier one left).
    let liveCallsLeft: String
    let session: SinkSession
    /// The reader of stdout went away (`telwatch | head`): the session stops.
    let readerGone: () -> Void

    var stateDirectory: String? { runs?.stateStore?.directory }
}
