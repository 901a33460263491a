/// The groups `--help` and telwatch(1) list the options in. A sink's options are one group, which
/// the sink's row of the sink table names (`SinkRow.options`), so the lists follow the pipeline: a
/// reader finds MQTT's options together, where MQTT comes in the flow of an event.
enum OptionGroup: CaseIterable, Sendable {
    /// The bus, the stacks, the config file, the state directory, the contacts: every part uses them.
    case general
    /// Call screening decides about a call before any sink hears of it.
    case screening
    case output
    case runs
    case phoneActions
    case callCommands
    case api
    case hooks
    case mqtt
    case history
    /// `telwatch log`'s own options.
    case log
    /// `doctor`'s, `simulate`'s and `demo`'s own options.
    case otherCommands

    /// The group's heading: `--help`'s (`MQTT export options:`), and telwatch(1)'s subsection with
    /// its first letter capitalized.
    var title: String {
        switch self {
        case .general: return "general options"
        case .screening: return "call screening options"
        case .output: return "output options"
        case .runs: return "background run options"
        case .phoneActions: return "phone action options"
        case .callCommands: return "call-scoped command options"
        case .api: return "D-Bus API options"
        case .hooks: return "hook options"
        case .mqtt: return "MQTT export options"
        case .history: return "call history options"
        case .log: return "options of log"
        case .otherCommands: return "options of doctor, simulate and demo"
        }
    }

    /// The groups in the order they are listed: the general options, screening (before the
    /// sinks, as in the pipeline), then the sinks' groups in the sink table's order, then the
    /// other commands' own options.
    static var listed: [OptionGroup] {
        let sinks = WatchSinks.table.compactMap(\.options)
        let before: [OptionGroup] = [.general, .screening]
        let after = allCases.filter { !before.contains($0) && !sinks.contains($0) }
        return before + sinks + after
    }
}
