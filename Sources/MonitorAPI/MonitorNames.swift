import CallMonitor
import DBus

/// The names of telwatch's own D-Bus API (docs/dbus-api.md).
public enum MonitorNames {
    public static let busName = "io.telwatch.Monitor1"
    public static let path: ObjectPath = "/io/telwatch/Monitor1"
    public static let interface = "io.telwatch.Monitor1"
    public static let callInterface = "io.telwatch.Call1"
    public static let eventSignal = "Event"
    /// The errors `Silence` and the acts answer with (docs/dbus-api.md, "Acts on calls").
    public static let errorPrefix = "io.telwatch.Monitor1.Error."
    public static let noSuchCallError = errorPrefix + "NoSuchCall"
    public static let notRingingError = errorPrefix + "NotRinging"
    /// polkit (or, without it, the caller not being root) refused the act.
    public static let notPermittedError = errorPrefix + "NotPermitted"
    /// An act's options are not ones it takes.
    public static let invalidArgsError = "org.freedesktop.DBus.Error.InvalidArgs"
    /// Where the call objects are.
    public static let callsPath: ObjectPath = "/io/telwatch/Monitor1/Call"

    /// `/io/telwatch/Monitor1/Call/<the call id without dashes>`.
    public static func callPath(id: String) throws -> ObjectPath {
        try ObjectPath(callsPath.rawValue + "/" + String(decoding: id.utf8.filter { $0 != UInt8(ascii: "-") }, as: UTF8.self))
    }

    /// The error an act that failed answers with: `NoSuchCall`, `NotRinging`, `RefusedNumber`,
    /// `EmergencyNumber`, `NoSuchModem`, `ModemAmbiguous`, `StackRefused`, `StackTimedOut`,
    /// `StackGone`, `StackAnsweredOddly`.
    public static func error(of failure: CallActFailure) -> String {
        switch failure {
        case .noSuchCall: return noSuchCallError
        case .notRinging: return notRingingError
        case .refusedNumber: return errorPrefix + "RefusedNumber"
        case .emergencyNumber: return errorPrefix + "EmergencyNumber"
        case .noSuchModem: return errorPrefix + "NoSuchModem"
        case .modemAmbiguous: return errorPrefix + "ModemAmbiguous"
        case .stackRefused: return errorPrefix + "StackRefused"
        case .stackTimedOut: return errorPrefix + "StackTimedOut"
        case .stackGone: return errorPrefix + "StackGone"
        case .stackAnsweredOddly: return errorPrefix + "StackAnsweredOddly"
        }
    }
}
