import DBus

/// The names of telwatch's own D-Bus API (docs/dbus-api.md).
public enum MonitorNames {
    public static let busName = "io.telwatch.Monitor1"
    public static let path: ObjectPath = "/io/telwatch/Monitor1"
    public static let interface = "io.telwatch.Monitor1"
    public static let callInterface = "io.telwatch.Call1"
    public static let eventSignal = "Event"
    /// The errors `Silence` answers with.
    public static let noSuchCallError = "io.telwatch.Monitor1.Error.NoSuchCall"
    public static let notRingingError = "io.telwatch.Monitor1.Error.NotRinging"
    /// Where the call objects are.
    public static let callsPath: ObjectPath = "/io/telwatch/Monitor1/Call"

    /// `/io/telwatch/Monitor1/Call/<the call id without dashes>`.
    public static func callPath(id: String) throws -> ObjectPath {
        try ObjectPath(callsPath.rawValue + "/" + String(decoding: id.utf8.filter { $0 != UInt8(ascii: "-") }, as: UTF8.self))
    }
}
