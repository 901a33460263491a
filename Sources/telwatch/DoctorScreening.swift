import CallMonitor
import DBus
import Pipeline

extension Doctor {
    /// `screening = FILE`: the rules read as the daemon reads them, and whether each running stack
    /// would let this user hang a call up, as `reject` does (docs/screening.md, "Permissions").
    mutating func checkScreening(_ connection: Connection, stacks: [BackendKind]) {
        guard let path = options.screeningFile else { return }
        let rules: ScreeningRules
        switch WatchScreening.read(path) {
        case .success(let read): rules = read
        case .failure(let problem):
            return check(false, "screening: \(problem.text); screening is off until it is fixed: every call rings",
                         fix: "correct the file (docs/screening.md); a running telwatch reads it again when it is "
                             + "written, or on SIGHUP")
        }
        let count = rules.numberCount
        let read = "screening \(path): rules read (\(count) number\(count == 1 ? "" : "s") or prefix\(count == 1 ? "" : "es") listed)"
        guard !stacks.isEmpty else {
            return check(true, read + "; no stack runs, so whether it may hang up is known once one does")
        }
        var parts: [String] = []
        var fixes: [String] = []
        for kind in stacks {
            let verdict = ScreeningHangUp(kind: kind, permission: HangUpPermission.probe(kind, on: connection))
            parts.append(verdict.text)
            if let fix = verdict.fix { fixes.append(fix) }
        }
        let line = read + "; " + parts.joined(separator: "; ")
        guard !fixes.isEmpty else { return check(true, line) }
        guard rules.rejects else { return check(true, line + " (no rule rejects, so none is needed)") }
        check(false, line + ": a rejected call would ring", fix: fixes.joined(separator: "; "))
    }
}

/// One stack's answer to "may screening hang up as this user", in doctor's words, with the fix:
/// what the Debian package grants, and how to grant it by hand.
struct ScreeningHangUp {
    let kind: BackendKind
    let permission: HangUpPermission

    var text: String {
        let action = HangUpPermission.modemManagerAction
        switch (kind, permission) {
        case (.modemManager, .allowed):
            return "it may hang up calls as this user (polkit allows ModemManager's \(action))"
        case (.ofono, .allowed):
            return "it may hang up calls as this user (oFono's bus policy lets VoiceCall.Hangup through)"
        case (.modemManager, .refused):
            return "it may not hang up calls as this user: polkit does not allow ModemManager's \(action)"
        case (.ofono, .refused):
            return "it may not hang up calls as this user: the bus's policy for oFono refuses VoiceCall.Hangup"
        case (_, .needsAuthentication):
            return "it may not hang up calls as this user: polkit needs authentication for ModemManager's \(action), "
                + "and a service has nobody to type a password"
        case (_, .noPolkit(let why)):
            return "it may not hang up calls: polkit is not on this bus, so ModemManager cannot authorize one (\(why))"
        case (_, .unknown(let why)):
            return "whether it may hang up at \(stack) is not known: \(why)"
        }
    }

    var fix: String? {
        switch (kind, permission) {
        case (_, .allowed):
            return nil
        case (.modemManager, .refused), (.modemManager, .needsAuthentication):
            return "the package's polkit rule (/usr/share/polkit-1/rules.d/50-telwatch.rules) grants \(HangUpPermission.modemManagerAction) "
                + "to the telwatch user: run telwatch as that user (the packaged service does), or grant it to this "
                + "user by hand (docs/screening.md, \"Permissions\")"
        case (.ofono, .refused):
            return "the package's D-Bus policy (/usr/share/dbus-1/system.d/telwatch-ofono.conf) allows VoiceCall.Hangup "
                + "to the telwatch group: add the user to it (usermod -aG telwatch USER) and start telwatch again; "
                + "without the package install dist/dbus-1/telwatch-ofono.conf into /etc/dbus-1/system.d/"
        case (_, .noPolkit):
            return "start polkit (systemctl start polkit)"
        case (_, .unknown), (.ofono, .needsAuthentication):
            return "check \(stack)'s logs (journalctl -u \(kind == .modemManager ? "ModemManager" : "ofono")) and run doctor again"
        }
    }

    private var stack: String { kind == .modemManager ? "ModemManager" : "oFono" }
}

extension ScreeningRules {
    /// Whether any rule hangs calls up (or deflects them, which falls back to a hang-up), so that
    /// the stack must allow it.
    var rejects: Bool {
        blocked.contains { $0.key.asksTheStack && !$0.value.isEmpty } || withheld?.action.asksTheStack == true
            || unknown?.action.asksTheStack == true || quiet.contains { $0.action.asksTheStack }
    }
}
