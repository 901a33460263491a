import DBus
import Loop

extension Doctor {
    /// With a phone action on: the session bus, and each action's service on it, running or
    /// startable by the bus (D-Bus activation), as telwatch would find them (docs/phone-actions.md).
    mutating func checkPhoneActions() {
        let actions = options.actions
        guard actions.isAnyOn else { return }
        let bus: Connection
        do {
            bus = try Connection(actions.bus, loop: try EventLoop())
        } catch {
            return check(false, "session bus for the phone actions: \(error)",
                         fix: "run telwatch (and doctor) in the phone user's session (the user unit), or give "
                             + "--session-bus ADDRESS")
        }
        defer { bus.close() }
        let activatable = (try? bus.callBlocking(
            destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
            member: "ListActivatableNames", timeout: 5).decode([String].self)) ?? []
        let wanted: [(on: Bool, flag: String, service: String, name: String, package: String)] = [
            (actions.feedback, "--feedback", "feedbackd", "org.sigxcpu.Feedback", "feedbackd"),
            (actions.callAudio, "--call-audio", "callaudiod", "org.mobian_project.CallAudio", "callaudiod"),
            (actions.notify, "--notify", "a notification server", "org.freedesktop.Notifications",
             "the desktop's notification daemon"),
        ]
        checkDialer(bus)
        for action in wanted where action.on {
            let owner = try? bus.callBlocking(
                destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
                member: "GetNameOwner", action.name, timeout: 5).decode(String.self)
            if let owner {
                check(true, "\(action.flag): \(action.service) (\(action.name)) runs as \(owner)")
            } else if activatable.contains(action.name) {
                check(true, "\(action.flag): \(action.service) (\(action.name)) is not running; the bus starts it "
                      + "when telwatch asks")
            } else {
                check(false, "\(action.flag): \(action.service) (\(action.name)) is not on the session bus",
                      fix: "install and start \(action.package); telwatch uses it as soon as it appears")
            }
        }
    }

    /// The phone's dialer, if one runs in the session: what telwatch leaves to it, and what
    /// screening can and cannot do beside it (docs/phones.md).
    private mutating func checkDialer(_ bus: Connection) {
        let owner = try? bus.callBlocking(
            destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
            member: "GetNameOwner", "org.gnome.Calls", timeout: 5).decode(String.self)
        guard let owner else {
            return check(true, "dialer: none on the session bus (org.gnome.Calls): --feedback and --notify ring "
                         + "and notify themselves")
        }
        check(true, "dialer: GNOME Calls (org.gnome.Calls) runs as \(owner): telwatch leaves the ring and the "
              + "missed-call notifications to it, and silences its ring for every call screening holds quiet "
              + "(GNOME Calls 48 may still ring one for a few tens of milliseconds as it comes); "
              + "a rejected call still leaves GNOME Calls' \"Missed call\" notification and a missed call in "
              + "its history, which telwatch cannot take back (docs/phones.md)")
    }
}
