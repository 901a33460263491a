/// telwatch's commands, as `telwatch COMMAND` names them (`watch` is also the default).
enum TelwatchCommand: String, CaseIterable, Sendable {
    case watch, status, events, doctor, log, block, allow, simulate, demo

    /// One line for the man page and the completions.
    var summary: String {
        switch self {
        case .watch: return "follow the calls and hold a background run while any is live (the default)"
        case .status: return "the calls live now, the run and the last sleep, from the running service"
        case .events: return "follow the running service's events"
        case .doctor: return "check what telwatch needs, one line each, with the fix"
        case .log: return "the calls recorded in the history"
        case .block: return "put numbers on the screening rules' block list; a running telwatch follows"
        case .allow: return "put numbers on the screening rules' allow list; a running telwatch follows"
        case .simulate: return "a fake ModemManager on a bus, driven by a script"
        case .demo: return "a short story against a private bus: see it work with no modem"
        }
    }

    /// What follows the options in the man page's synopsis (roff).
    var operands: String? {
        switch self {
        case .simulate: return "[\\fISCRIPT\\fR | \\-]"
        case .block, .allow: return "\\fINUMBER\\fR..."
        default: return nil
        }
    }
}
