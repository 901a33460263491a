import CallMonitor

/// What the retained state remembers of past calls; it outlives a restart (kept in the outbox's
/// database), so Home Assistant never sees it forgotten and found again.
struct MQTTCallMemory: Equatable {
    var callerNumber: String?
    var callerName: String?
    var missedNumber: String?
    var missedName: String?
    var lastDirection: CallDirection?
    var lastEnded: Double?
    var lastDuration: Double?
    /// The call ringing in, unanswered, as telwatch last saw it: found gone at the next start,
    /// it was missed while telwatch was down (as the history counts it).
    var ringingID: String?
}
