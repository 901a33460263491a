/// A stack's state as the event stream reports it (`{"event":"backend","status":…}`).
public enum BackendStatus: String, Sendable {
    case appeared, vanished, absent, synced
    case syncRefused = "sync-refused"
    case syncFailed = "sync-failed"
}
