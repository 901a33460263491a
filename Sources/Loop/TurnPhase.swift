/// Where a hook's `prepare` runs in the end of a turn, declared by each hook and kept by the loop
/// whatever order the hooks were added in (docs/ARCHITECTURE.md, "A turn"): first the buses'
/// messages are dispatched (the turn's events happen), then the events leave the process, the
/// terminal's lines first, then what is kept on disk is written: no line waits for a disk write.
public enum TurnPhase: Int, Comparable, Sendable, CaseIterable {
    /// The D-Bus connections dispatch what they received: handlers run, events flow through the
    /// pipeline, the sinks queue their output (D-Bus messages the sinks sent leave as their
    /// socket is writable, in the wait that follows).
    case dispatch
    /// The event stream's lines are written (stdout).
    case print
    /// MQTT: the outbox's transaction, then the publications.
    case publish
    /// Written to disk: the call history's transaction (and its WAL sync at a run's end), the
    /// run record.
    case persist

    public static func < (lhs: TurnPhase, rhs: TurnPhase) -> Bool { lhs.rawValue < rhs.rawValue }
}
