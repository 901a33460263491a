import BGRunManager
import CallMonitor
import DBus
import Loop
import MonitorAPI
import Pipeline

/// `telwatch status`: a one-shot look at the calls live now and the run the daemon recorded.
enum StatusCommand {
    /// The watch options `status` takes.
    static let acceptedOptions = OptionTable.accepted(by: .status)

    static func run(_ arguments: [String]) -> Int32 {
        let options: WatchOptions
        switch WatchArguments.parseOrExit(arguments, command: "status", accepting: acceptedOptions, help: Help.status) {
        case .success(let parsed): options = parsed
        case .failure(let exit): return exit.status
        }
        guard let bus = BusSession.open(options.bus) else { return ExitStatus.busUnavailable.code }
        defer { bus.connection.close() }
        // The user unit's telwatch has its API on the session bus (`--api-bus session`).
        let apiBus = options.apiBus.flatMap { $0 == options.bus ? nil : BusSession.open($0) }
        defer { apiBus?.connection.close() }
        if options.apiBus != nil, options.apiBus != options.bus, apiBus == nil { return ExitStatus.busUnavailable.code }
        let report: StatusReport
        do {
            if let service = try ServiceView.read((apiBus ?? bus).connection, now: wallClockNow()) {
                report = StatusReport(service: service)
            } else {
                guard let ownLook = StatusReport.ownLook(options, bus: bus) else { return ExitStatus.busUnavailable.code }
                report = ownLook
            }
        } catch where Access.isRefusal(error) {
            warn(Access.refusal("status", bus: options.apiBus ?? options.bus))
            return ExitStatus.failure.code
        } catch {
            warn("the telwatch service did not answer: \(error)")
            return ExitStatus.busUnavailable.code
        }
        report.write(to: LineWriter(fd: 1), json: options.json, bus: options.apiBus ?? options.bus)
        return ExitStatus.success.code
    }
}
