enum ModemManagerBus {
    static let service = "org.freedesktop.ModemManager1"
    static let root = "/org/freedesktop/ModemManager1"
    static let voice = "org.freedesktop.ModemManager1.Modem.Voice"
    static let call = "org.freedesktop.ModemManager1.Call"
    /// `call`, for what compares it in place.
    static let callInterface: StaticString = "org.freedesktop.ModemManager1.Call"
    static let sim = "org.freedesktop.ModemManager1.Sim"
}
