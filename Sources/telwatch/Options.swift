import DBus
import Glibc
import CallMonitor
import Loop
import PhoneActions
import Pipeline

/// Settings of `telwatch watch`, from a config file and then from flags (flags win).
struct WatchOptions {
    enum Verbosity { case quiet, normal, verbose }

    var backend = BackendSelection.auto
    var bus = BusAddress.system
    var json = false
    /// nil = take no inhibitor lock.
    var inhibitWhat: String? = "sleep"
    var inhibitMode = "block"
    var hooksDirectory: String?
    /// `hook.EVENT = COMMAND ARGS…` lines of the config file: argv split as `sh` would
    /// (`CommandWords`), no shell.
    var hookCommands: [String: [[String]]] = [:]
    /// `while.SCOPE = COMMAND ARGS…` and `--while SCOPE=COMMAND ARGS…`: call-scoped commands.
    var whileCommands: [ScopedCommand] = []
    /// `--contacts FILE`: names for numbers.
    var contactsFile: String?
    /// `--screening FILE`: the call screening rules (docs/screening.md).
    var screeningFile: String?
    var runCommand: [String] = []
    /// A run that lives longer than this ends itself (seconds); nil = no lease.
    var lease: Double? = 4 * 3600
    var heartbeat: Double?
    var hookTimeout: Double = 30
    var stopGrace: Double = 5
    var redactNumbers = false
    var verbosity = Verbosity.normal
    var stateDirectory: String?
    var wakelock = false
    /// Hold a sleep delay lock while awake, released as the system goes to sleep.
    var sleepDelayLock = false
    /// After a resume, hold a sleep block lock this long (seconds); nil = none.
    var resumeGrace: Double?
    /// Record every call in `history.db` in the state directory.
    var history = true
    /// Calls first seen longer ago than this leave the history (seconds); nil keeps them forever.
    var historyKeep: Double? = 365 * 86_400
    /// The built-in phone actions (ring, call audio, missed-call notifications) and their session bus.
    var actions = PhoneActionSettings()
    /// Own io.telwatch.Monitor1 (docs/dbus-api.md) on `apiBus`, nil meaning the watched bus.
    var api = true
    var apiBus: BusAddress?
    /// Publish to an MQTT broker (`--mqtt URL`); nothing of MQTT exists without it.
    var mqtt = MQTTOptions()
}

extension WatchOptions {
    /// The settings that differ in `new` and that a running telwatch cannot change: they shape
    /// the bus, the backends, the output format or the run.
    func settingsNeedingARestart(comparedWith new: WatchOptions) -> [String] {
        var changed: [String] = []
        func compare<T: Equatable>(_ name: String, _ path: KeyPath<WatchOptions, T>) {
            if self[keyPath: path] != new[keyPath: path] { changed.append(name) }
        }
        compare("backend", \.backend)
        compare("bus", \.bus)
        compare("json", \.json)
        compare("inhibit", \.inhibitWhat)
        compare("inhibit", \.inhibitMode)
        compare("run", \.runCommand)
        compare("lease", \.lease)
        compare("heartbeat", \.heartbeat)
        compare("stop-grace", \.stopGrace)
        compare("state-dir", \.stateDirectory)
        compare("wakelock", \.wakelock)
        compare("sleep-delay-lock", \.sleepDelayLock)
        compare("resume-grace", \.resumeGrace)
        compare("history", \.history)
        compare("history-keep", \.historyKeep)
        compare("phone actions", \.actions)
        compare("contacts", \.contactsFile)
        compare("api", \.api)
        compare("api-bus", \.apiBus)
        compare("mqtt", \.mqtt)
        return changed.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }
}

extension Parse {
    /// `--bus system|session|ADDRESS`.
    static func bus(_ text: String) throws -> BusAddress {
        guard let bus = BusAddress(text) else {
            throw UsageError("--bus takes system, session or a D-Bus address such as unix:path=/run/bus, not \(Parse.quoted(text))")
        }
        return bus
    }
}

extension WatchOptions {
    /// Applies one setting by name; shared by flags and the config file so both mean the same.
    mutating func set(_ name: String, _ value: String) throws {
        let option = "--" + name
        switch name {
        case "backend":
            guard let backend = BackendSelection(rawValue: value) else {
                throw UsageError("--backend takes auto, modemmanager or ofono, not \(Parse.quoted(value))")
            }
            self.backend = backend
        case "bus": bus = try Parse.bus(value)
        case "json": json = try Parse.bool(value, for: option)
        case "inhibit": (inhibitWhat, inhibitMode) = try Parse.inhibit(value)
        case "hooks": hooksDirectory = try Parse.directory(value, for: option, absolute: false)
        case _ where name.hasPrefix("hook."):
            let event = String(name.dropFirst(5))
            let known = HookEvents.names
            guard known.contains(event) else {
                throw UsageError("unknown hook event \(Parse.quoted(event)) (one of \(known.joined(separator: ", ")))")
            }
            hookCommands[event, default: []].append(try Parse.command(value, for: name))
        case _ where name.hasPrefix("while."):
            let scope = String(name.dropFirst(6))
            guard let known = CallScope(rawValue: scope) else {
                throw UsageError("unknown call scope \(Parse.quoted(scope)) (one of "
                                 + CallScope.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            whileCommands.append(ScopedCommand(scope: known, arguments: try Parse.command(value, for: name)))
        case "contacts": contactsFile = try Parse.file(value, for: option)
        case "screening": screeningFile = try Parse.file(value, for: option)
        case "run":
            runCommand = try CommandWords.split(value)
        case "lease": lease = value == "none" ? nil : try Parse.seconds(value, for: option)
        case "heartbeat": heartbeat = value == "none" ? nil : try Parse.seconds(value, for: option)
        case "hook-timeout": hookTimeout = try Parse.seconds(value, for: option)
        case "stop-grace": stopGrace = try Parse.seconds(value, for: option)
        case "redact-numbers": redactNumbers = try Parse.bool(value, for: option)
        case "state-dir": stateDirectory = try Parse.directory(value, for: option, absolute: true)
        case "wakelock": wakelock = try Parse.bool(value, for: option)
        case "sleep-delay-lock": sleepDelayLock = try Parse.bool(value, for: option)
        case "resume-grace": resumeGrace = value == "none" ? nil : try Parse.seconds(value, for: option)
        case "history": history = try Parse.bool(value, for: option)
        case "history-keep": historyKeep = try Parse.retention(value, for: option)
        case "feedback": actions.feedback = try Parse.bool(value, for: option)
        case "call-audio": actions.callAudio = try Parse.bool(value, for: option)
        case "notify": actions.notify = try Parse.bool(value, for: option)
        case "session-bus":
            guard value != "system", let bus = BusAddress(value) else {
                throw UsageError("--session-bus takes session or a D-Bus address such as unix:path=/run/user/1000/bus, "
                                 + "not \(Parse.quoted(value))")
            }
            actions.bus = bus
        case "api": api = try Parse.bool(value, for: option)
        case "api-bus":
            guard value == "system" || value == "session" else {
                throw UsageError("--api-bus takes system or session, not \(Parse.quoted(value))")
            }
            apiBus = try Parse.bus(value)
        // `--quiet` and `--verbose` are long option names too, so the config file takes them.
        case "quiet":
            if try Parse.bool(value, for: option) { verbosity = .quiet } else if verbosity == .quiet { verbosity = .normal }
        case "verbose":
            if try Parse.bool(value, for: option) { verbosity = .verbose } else if verbosity == .verbose { verbosity = .normal }
        case "verbosity":
            switch value {
            case "quiet": verbosity = .quiet
            case "normal": verbosity = .normal
            case "verbose": verbosity = .verbose
            default: throw UsageError("verbosity takes quiet, normal or verbose, not \(Parse.quoted(value))")
            }
        default:
            guard try mqtt.set(name, value) else { throw UsageError("unknown setting \(Parse.quoted(name))") }
        }
    }

    /// Applies the config file's entries (`ConfigFile`) in order; the first bad one, or the first
    /// line that is no entry, is the error, with the file and line.
    mutating func load(configFile path: String) throws {
        let text: String
        do { text = try SmallFile.text(path, limit: 1 << 20) } catch {
            throw UsageError("cannot read config file \(path): \(error.reason)")
        }
        let (entries, mistake) = ConfigFile.entries(of: text)
        for entry in entries {
            do { try set(entry.key, ConfigFilePaths.value(of: entry, in: path)) } catch let error as UsageError {
                throw UsageError("\(path):\(entry.line): \(error.description)")
            }
        }
        if let mistake { throw UsageError("\(path):\(mistake.line): \(mistake.reason)") }
    }
}
