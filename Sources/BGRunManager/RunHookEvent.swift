/// The run's events that run hooks (`DIR/run-started`, `hook.run-started = …`): the names are the
/// hooks' and the event stream's. The call events' are `Pipeline.CallHookEvent`.
public enum RunHookEvent: String, CaseIterable, Sendable {
    case started = "run-started"
    case stopped = "run-stopped"
    case expired = "run-expired"
}
