import Loop
import Pipeline

/// One sink of the watch pipeline: its type's name (as docs/ARCHITECTURE.md's diagram says it),
/// the turn phase its output belongs to (nil: it acts as events arrive), the group of the options
/// it is made from, whether it needs the run manager, and how it is made (nil: off with these
/// options). How it takes a reloaded
/// configuration is its own `ReloadsOptions` conformance (SinkReload.swift), if it has one.
struct SinkRow {
    let name: String
    let phase: TurnPhase?
    /// The options that configure this sink: `--help` and telwatch(1) list them together, in the
    /// table's order (nil: it has none of its own).
    let options: OptionGroup?
    /// Made once the run manager has started. The run manager starts just before the first
    /// such row: a run left open by a killed predecessor is shown by the sinks above it.
    let needsRuns: Bool
    let make: (SinkParts) throws -> EventSink?

    init(_ name: String, phase: TurnPhase? = nil, options: OptionGroup? = nil, needsRuns: Bool = true,
         make: @escaping (SinkParts) throws -> EventSink?) {
        self.name = name
        self.phase = phase
        self.options = options
        self.needsRuns = needsRuns
        self.make = make
    }
}
