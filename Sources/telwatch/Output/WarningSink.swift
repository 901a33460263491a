import BGRunManager
import CallMonitor
import Loop
import Pipeline

/// Problems on stderr, whatever the output format: the warnings among run, sleep and backend
/// events (their own `isWarning` decides), and hooks that failed (all hooks with `--verbose`).
final class WarningSink: EventSink {
    var verbosity: WatchOptions.Verbosity

    init(verbosity: WatchOptions.Verbosity) {
        self.verbosity = verbosity
    }

    func receive(_ delivery: Delivery) {
        guard verbosity != .quiet else { return }
        switch delivery.event {
        case .run(let run) where run.isWarning: warn(ServiceEventFormat.warning(run))
        case .sleep(let sleep) where sleep.isWarning: warn(ServiceEventFormat.warning(sleep))
        case .backend(let notice, _) where notice.isWarning: warn(notice.description)
        case .acted(let acted, _) where acted.isWarning:
            // The stack misbehaved; a refusal is the asker's answer, not a problem (`ActedCall.isWarning`).
            let call = acted.callID.map { " of call " + $0.prefix(8) } ?? ""
            warn("\(acted.kind.rawValue)\(call) asked by \(acted.requester.rawValue): \(acted.report.failure?.message ?? "")")
        case .hook(let outcome):
            let command = outcome.command.joined(separator: " ")
            if !outcome.result.isSuccess {
                warn("hook \(command) for \(outcome.event): \(outcome.result)")
            } else if verbosity == .verbose {
                warn("hook \(command) for \(outcome.event): \(outcome.result) in \(Duration.text(outcome.duration))")
            }
        default:
            break
        }
    }
}
