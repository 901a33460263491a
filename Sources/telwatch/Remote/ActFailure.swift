import DBus

/// Why the running service did not do an act, from the error it (or the bus) answered: one line
/// for stderr and the exit status it stands for (`telwatch answer --help` lists them). The
/// error's message is the service's, and for `StackRefused` the stack's own words: hostile text,
/// which `warn` escapes and cuts.
struct ActFailure: Error, Equatable {
    let status: ExitStatus
    let message: String

    /// The API's typed errors (docs/dbus-api.md), by the last part of their name.
    enum APIError: String, CaseIterable {
        case noSuchCall = "NoSuchCall"
        case notRinging = "NotRinging"
        case notPermitted = "NotPermitted"
        case refusedNumber = "RefusedNumber"
        case emergencyNumber = "EmergencyNumber"
        case noSuchModem = "NoSuchModem"
        case modemAmbiguous = "ModemAmbiguous"
        case stackRefused = "StackRefused"
        case stackTimedOut = "StackTimedOut"
        case stackGone = "StackGone"
        case stackAnsweredOddly = "StackAnsweredOddly"

        /// `io.telwatch.Monitor1.Error.NotRinging` → `.notRinging`; nil for any other name.
        init?(name: String) {
            guard name.hasPrefix("io.telwatch."), let last = name.split(separator: ".").last,
                  name.dropLast(last.count).hasSuffix(".Error.") else { return nil }
            self.init(rawValue: String(last))
        }

        var status: ExitStatus {
            switch self {
            case .noSuchCall, .noSuchModem: return .noSuchCall
            case .modemAmbiguous: return .ambiguousCall
            case .notRinging: return .notRinging
            case .notPermitted: return .notPermitted
            case .refusedNumber, .emergencyNumber: return .refusedNumber
            case .stackRefused, .stackTimedOut, .stackGone, .stackAnsweredOddly: return .stackFailed
            }
        }

        /// What went wrong, before the service's own words.
        var headline: String {
            switch self {
            case .noSuchCall: return "the call is no longer live"
            case .notRinging: return "the call does not ring"
            case .notPermitted: return "this user may not do that"
            case .refusedNumber: return "refused: not a number to dial"
            case .emergencyNumber: return "refused: an emergency number is never dialled from afar"
            case .noSuchModem: return "no voice modem has that path"
            case .modemAmbiguous: return "several voice modems: name one with --modem PATH"
            case .stackRefused: return "the stack refused"
            case .stackTimedOut: return "the stack did not answer in time"
            case .stackGone: return "the stack went away"
            case .stackAnsweredOddly: return "the stack answered what its interface does not say"
            }
        }
    }

    init(status: ExitStatus, message: String) {
        self.status = status
        self.message = message
    }

    /// The failure an error answered to `command` (`answer`, `dial`) stands for; `bus` names the
    /// API's bus in what is said.
    init(_ error: Error, command: String, bus: BusAddress) {
        guard let failure = error as? DBusError else {
            self.init(status: .failure, message: "\(command): \(error)")
            return
        }
        switch failure {
        case .remote(let name, let text):
            if let typed = APIError(name: name) {
                self.init(status: typed.status, message: "\(command): \(typed.headline)" + (text.isEmpty ? "" : ": " + text))
                return
            }
            switch name {
            case "org.freedesktop.DBus.Error.AccessDenied":
                self.init(status: .notPermitted, message: "\(command): the telwatch service on the \(bus) bus does not "
                          + "take acts from this user (its bus policy refused): " + text)
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                self.init(status: .busUnavailable, message: Self.noService(command, bus: bus))
            case DBusError.noReplyName, DBusError.timeoutName:
                self.init(status: .busUnavailable, message: "\(command): the telwatch service did not answer: " + text)
            case "org.freedesktop.DBus.Error.UnknownMethod":
                self.init(status: .failure, message: "\(command): the running telwatch service does not take this act "
                          + "(it is older than this telwatch): " + text)
            case "org.freedesktop.DBus.Error.UnknownObject":
                self.init(status: .noSuchCall, message: "\(command): \(APIError.noSuchCall.headline)")
            default:
                self.init(status: .failure, message: "\(command): the telwatch service refused: \(failure)")
            }
        case .timedOut, .disconnected:
            self.init(status: .busUnavailable, message: "\(command): the telwatch service did not answer: \(failure)")
        default:
            self.init(status: .failure, message: "\(command): \(failure)")
        }
    }

    /// Nobody owns the API's name on `bus`.
    static func noService(_ command: String, bus: BusAddress) -> String {
        "\(command): no telwatch service is running on the \(bus) bus (nobody owns io.telwatch.Monitor1)"
    }
}
