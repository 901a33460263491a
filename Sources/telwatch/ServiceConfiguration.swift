import Glibc
import Loop

/// Which configuration `block`, `allow`, `doctor` and `log` read when given no `--config`: the
/// service's, the one its unit passes (docs/screening.md, "From the command line"). Root, and the
/// service's own account (`sudo telwatch doctor --user telwatch`), get the system service's; any
/// other user its own instance's, the user unit's.
enum ServiceConfiguration: Equatable {
    /// The system service (dist/systemd/telwatch.service, dist/openrc/telwatch): the config file it is given.
    case system(configFile: String)
    /// This user's own instance (dist/systemd/telwatch-user.service, which reads no config file):
    /// the rules file its unit names.
    case user(rulesFile: String)

    /// The system service's `--config`.
    static let systemConfigFile = "/etc/telwatch/telwatch.conf"
    /// The account the system service runs as (`User=`, `command_user`).
    static let serviceAccount = "telwatch"
    /// The user unit's rules file, under the user's configuration directory (systemd's `%E`).
    static let userRulesFile = "telwatch/screening.conf"

    /// nil: not root nor the service's account, and no `$HOME` to find this user's own in.
    static func find(euid: uid_t = geteuid(), serviceUID: uid_t? = getpwnam(serviceAccount)?.pointee.pw_uid,
                     environment: [String] = Subprocess.currentEnvironment()) -> ServiceConfiguration? {
        if euid == 0 || euid == serviceUID { return .system(configFile: systemConfigFile) }
        func value(_ name: String) -> String? {
            let prefix = name + "="
            guard let entry = environment.last(where: { $0.hasPrefix(prefix) }) else { return nil }
            let value = String(entry.dropFirst(prefix.count))
            return value.isEmpty ? nil : value
        }
        // As the XDG base directories (and systemd's %E) read it: a relative value is ignored.
        if let base = value("XDG_CONFIG_HOME"), base.hasPrefix("/") { return .user(rulesFile: base + "/" + userRulesFile) }
        return value("HOME").map { .user(rulesFile: $0 + "/.config/" + userRulesFile) }
    }

    /// Whether `arguments` give a config file (`--config FILE`, before a `--`), which then
    /// replaces this one.
    static func isConfigGiven(_ arguments: [String]) -> Bool {
        var cursor = ArgumentCursor(arguments)
        while let argument = cursor.next(), argument != "--" {
            if argument == "--config" { return true }
        }
        return false
    }

    /// Sets what the service is given, before the command's own flags: the system service's
    /// config file, where it exists; the user unit's rules file, where it exists.
    func load(into options: inout WatchOptions) throws {
        switch self {
        case .system(let configFile):
            if exists(configFile) { try options.load(configFile: configFile) }
        case .user(let rulesFile):
            if exists(rulesFile) { options.screeningFile = rulesFile }
        }
    }

    /// "the system service's configuration, /etc/telwatch/telwatch.conf".
    var described: String {
        switch self {
        case .system(let configFile): return "the system service's configuration, \(configFile)"
        case .user(let rulesFile): return "this user's own instance's rules file, \(rulesFile)"
        }
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 || errno != ENOENT
    }
}
