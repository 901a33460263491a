import CallMonitor
import Contacts
import Glibc
import Loop
import Pipeline

/// `--screening FILE` for `telwatch watch`: the rules read at the start, again when the file is
/// written or replaced, and on SIGHUP. It fails open (docs/screening.md): a file that cannot be
/// read or parsed is one line on stderr, naming the file and the line, and screening is off until
/// it is fixed, so every call rings. With `--verbose` each read that succeeds is a line, which says
/// that an edit (`telwatch block`) has been taken.
final class WatchScreening {
    let screener: CallScreener
    var verbose: Bool
    private(set) var path: String?
    private var watch: FileWatch?
    private let loop: EventLoop

    init(path: String?, verbose: Bool, loop: EventLoop, contacts: ContactDirectory?,
         localTime: @escaping (Double) -> LocalTime, onHangupFailed: @escaping (ScreenedCall) -> Void,
         deflect: @escaping (CallKey, String, @escaping (CallActFailure?) -> Void) -> Void,
         hangUp: @escaping (CallKey, @escaping (String?) -> Void) -> Void) {
        self.loop = loop
        self.verbose = verbose
        screener = CallScreener(contacts: contacts, localTime: localTime, onHangupFailed: onHangupFailed,
                                deflect: deflect, later: { [weak loop] work in loop?.soon(work) }, hangUp: hangUp)
        screener.onDeflectionLost = { warn("screening: " + ($0.failureText ?? "a deflection failed")) }
        follow(path)
    }

    /// Reads `path` (nil: screening off) and follows it; the same path is read again.
    func follow(_ path: String?) {
        if path != self.path {
            watch = nil
            self.path = path
            if let path {
                do { watch = try FileWatch(loop: loop, path: path) { [weak self] in self?.reload() } } catch {
                    warn("screening: \(path) will not be read again when it changes (SIGHUP reads it): \(error)")
                }
            }
        }
        reload()
    }

    func reload() {
        guard let path else {
            screener.rules = nil
            return
        }
        switch Self.read(path) {
        case .success(let rules):
            screener.rules = rules
            if verbose { warn("screening: read \(path): \(rules.numberCount) numbers and prefixes") }
        case .failure(let problem):
            off(problem.text)
        }
    }

    /// Why a rules file screens nothing: it cannot be read, or a line of it (or of a list it
    /// names) is wrong.
    struct Unusable: Error {
        let text: String
    }

    /// The largest rules file read (docs/screening.md, "Sizes"): rules are written by hand and
    /// read whole on the loop's thread at every change; long lists belong in list files.
    static let rulesSizeLimit = 1 << 20

    /// The rules of `path` as the daemon reads them (`telwatch doctor` reads them so too).
    static func read(_ path: String) -> Result<ScreeningRules, Unusable> {
        let bytes: [UInt8]
        do { bytes = try SmallFile.read(path, limit: rulesSizeLimit) } catch {
            return .failure(Unusable(text: "cannot read \(path): \(error.reason)"))
        }
        return rules(bytes, path: path)
    }

    /// The rules `bytes` would be as the file `path`, by the daemon's limits and parser: what
    /// `telwatch block` checks before it replaces the file.
    static func rules(_ bytes: [UInt8], path: String) -> Result<ScreeningRules, Unusable> {
        guard bytes.count <= rulesSizeLimit else {
            return .failure(Unusable(text: "\(path) would be \(bytes.count) bytes, larger than the \(rulesSizeLimit) bytes "
                                     + "telwatch reads as a rules file (a block-list file holds up to "
                                     + "\(ScreeningRules.listSizeLimit) bytes)"))
        }
        do {
            return .success(try ScreeningRules.parse(bytes, path: path) { list in
                try SmallFile.read(list, limit: ScreeningRules.listSizeLimit)
            })
        } catch {
            return .failure(Unusable(text: "\(error)"))
        }
    }

    private func off(_ why: String) {
        screener.rules = nil
        warn("screening: \(why); screening is off until it is fixed: every call rings")
    }

    /// The local weekday and minute of a wall-clock moment.
    static func localTime(_ seconds: Double) -> LocalTime {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return LocalTime(weekday: 0, minute: 0) }
        return LocalTime(weekday: Int(parts.tm_wday), minute: Int(parts.tm_hour) * 60 + Int(parts.tm_min))
    }
}
