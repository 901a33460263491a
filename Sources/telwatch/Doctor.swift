import BGRunManager
import CallMonitor
import Contacts
import DBus
import Glibc
import History
import Pipeline
import Processes

/// `telwatch doctor`: what is reachable and allowed, one line each, with the fix for what is not.
struct Doctor {
    let options: WatchOptions
    private let output = LineWriter(fd: 1)
    private var problems = 0
    /// Which state directory the checks read (`StatePlace`: the same rule as `status` and `log`).
    private var statePlace: StatePlace?

    init(options: WatchOptions) { self.options = options }

    mutating func check(_ ok: Bool, _ text: String, fix: String? = nil) {
        if ok {
            output.write("✔ " + text)
        } else {
            problems += 1
            output.write("✘ " + text + (fix.map { "\n    fix: " + $0 } ?? ""))
        }
    }

    func note(_ text: String) { output.write("  " + text) }

    mutating func run() -> Int32 {
        let connection: Connection
        do {
            connection = try BusSession(options.bus).connection
        } catch {
            check(false, "\(options.bus) bus: \(error)",
                  fix: options.bus == .system ? "is dbus running? (systemctl status dbus)" : "pass --bus with a reachable bus")
            return ExitStatus.busUnavailable.code
        }
        defer { connection.close() }
        check(true, "\(options.bus) bus reachable as \(connection.uniqueName)")
        statePlace = StatePlace.find(options, bus: connection)
        if let statePlace, statePlace.origin != .asked {
            note("state directory \(TerminalText.field(statePlace.directory)): \(statePlace.why)")
        }

        var stacks: [BackendKind] = []
        for kind in options.backend.kinds {
            if checkStack(kind, on: connection) { stacks.append(kind) }
        }
        if stacks.isEmpty, options.backend == .auto {
            check(false, "no telephony stack is running on this bus",
                  fix: "start ModemManager (systemctl start ModemManager) or oFono (systemctl start ofono); "
                      + "to try telwatch without a modem: telwatch demo")
        }
        checkInhibitor(connection)
        checkDelayLock(connection)
        checkHooks()
        checkContacts()
        checkScreening(connection, stacks: stacks)
        checkActs(connection)
        checkStateDirectory()
        checkHistory()
        checkPhoneActions()
        checkLastSleep()
        output.write(problems == 0 ? "all checks passed" : "\(problems) problem\(problems == 1 ? "" : "s") found")
        return problems == 0 ? ExitStatus.success.code : ExitStatus.problemsFound.code
    }

    private func owner(of name: String, on connection: Connection) -> String? {
        try? connection.callBlocking(destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
                                     member: "GetNameOwner", name, timeout: 5).decode(String.self)
    }

    /// Says what the stack's own probe found; returns whether it runs.
    private mutating func checkStack(_ kind: BackendKind, on connection: Connection) -> Bool {
        let stack = kind == .modemManager ? "ModemManager" : "oFono"
        let other = kind == .modemManager ? BackendKind.ofono : .modemManager
        switch BackendProbe.probe(kind, on: connection) {
        case .absent where options.backend == .auto:
            // Not a problem while the other stack runs; when neither does, `run` says so with the fix.
            note("\(stack) is not running (\(kind.serviceName) has no owner); telwatch follows it once it starts")
            return false
        case .absent:
            check(false, "\(stack) is not running (\(kind.serviceName) has no owner): telwatch sees no calls",
                  fix: "systemctl start \(kind == .modemManager ? "ModemManager" : "ofono"), "
                      + "or use --backend \(other.rawValue)")
            return false
        case .running(let owner, let modems, let voice):
            check(true, "\(stack) running as \(owner): \(modems) modem\(modems == 1 ? "" : "s"), \(voice) with voice")
            if kind == .modemManager && modems > 0 && voice == 0 {
                note("no modem offers voice calls yet (a modem must be enabled; mmcli -m 0 -e)")
            }
        case .refused(let owner, _):
            check(false, "\(stack) running as \(owner), but its policy does not let this user read calls "
                  + "(telwatch still sees call signals, but cannot list calls live at start)",
                  fix: "install dist/dbus-1/telwatch-ofono.conf into /etc/dbus-1/system.d/ and add the user to the "
                      + "telwatch group, or run telwatch as root")
        case .failed(let owner, let why):
            check(false, "\(stack) running as \(owner) but its modems cannot be listed: \(why)",
                  fix: "check \(stack)'s logs (journalctl -u \(kind == .modemManager ? "ModemManager" : "ofono"))")
        }
        return true
    }

    private mutating func checkInhibitor(_ connection: Connection) {
        guard let what = options.inhibitWhat else {
            note("no inhibitor lock configured (--inhibit none)")
            return
        }
        let name = "org.freedesktop.login1"
        guard owner(of: name, on: connection) != nil else {
            check(false, "systemd-logind is not on this bus: a call cannot keep the device awake",
                  fix: "telwatch needs logind (systemd or elogind) for its inhibitor lock; or run with --inhibit none")
            return
        }
        do {
            let reply = try connection.callBlocking(destination: name, path: "/org/freedesktop/login1",
                                                    interface: "org.freedesktop.login1.Manager", member: "Inhibit",
                                                    what, "telwatch doctor", "checking that a lock can be taken",
                                                    options.inhibitMode, timeout: 5)
            let lock = try reply.decode(UnixFD.self)
            lock.close()
            check(true, "an inhibitor lock can be taken (\(what), \(options.inhibitMode))")
        } catch {
            check(false, "logind refused an inhibitor lock (\(what), \(options.inhibitMode)): \(error)",
                  fix: options.inhibitMode == "block"
                      ? "polkit must allow org.freedesktop.login1.inhibit-block-\(what.split(separator: ":").first ?? "sleep") for this user"
                      : "polkit must allow delay inhibitors for this user")
        }
    }

    /// `--sleep-delay-lock`: logind must hand out a sleep delay lock.
    private mutating func checkDelayLock(_ connection: Connection) {
        guard options.sleepDelayLock, owner(of: "org.freedesktop.login1", on: connection) != nil else { return }
        do {
            let reply = try connection.callBlocking(destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                                                    interface: "org.freedesktop.login1.Manager", member: "Inhibit",
                                                    "sleep", "telwatch doctor", "checking that a delay lock can be taken",
                                                    "delay", timeout: 5)
            try reply.decode(UnixFD.self).close()
            check(true, "a sleep delay lock can be taken (sleep-delay-lock)")
        } catch {
            check(false, "logind refused a sleep delay lock: \(error)",
                  fix: "polkit must allow org.freedesktop.login1.inhibit-delay-sleep for this user, or turn sleep-delay-lock off")
        }
    }

    /// The last sleep the running (or last) telwatch saw, from its state directory.
    private mutating func checkLastSleep() {
        guard let directory = statePlace?.directory else { return }
        guard let record = RunStateStore.readSleep(directory: directory) else {
            note("no system sleep recorded yet")
            return
        }
        let lines = SleepStatus.lines(record)
        guard record.lastSleepOverridden else {
            check(true, lines.joined(separator: "\n  "))
            return
        }
        let fix = record.lastOverrideLock == .held
            ? "logind suspended despite telwatch's block lock: set LidSwitchIgnoreInhibited=no in "
                + "/etc/systemd/logind.conf (the lid switch ignores inhibitors by default) and do not suspend "
                + "with systemctl suspend -i; this clears at the next sleep with no call live"
            : "the run held no lock that blocks sleep (lock \(record.lastOverrideLock?.rawValue ?? "?")): see the inhibitor "
                + "check above and --inhibit; this clears at the next sleep with no call live"
        check(false, lines.joined(separator: "\n  "), fix: fix)
    }

    /// The hooks as the hook runner finds them (`HookRunner.files`): a file where a hook belongs
    /// that is not executable is a problem; anything else in the directory is not a hook.
    private mutating func checkHooks() {
        guard let directory = options.hooksDirectory else { return }
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            check(false, "hooks directory \(directory) does not exist", fix: "mkdir -p \(directory), or fix --hooks")
            return
        }
        guard let handle = opendir(directory) else {
            check(false, "hooks directory \(directory) cannot be read", fix: "chmod u+rx \(directory)")
            return
        }
        var others: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let event = name.hasSuffix(".d") ? String(name.dropLast(2)) : name
            if !name.hasPrefix("."), !HookEvents.names.contains(event) { others.append(name) }
        }
        closedir(handle)
        // A link to nothing at DIR/EVENT is no file to the runner, but it is where a hook belongs.
        let dangling = HookEvents.names.map { directory + "/" + $0 }.filter {
            var info = stat()
            return lstat($0, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK && stat($0, &info) != 0
        }
        let paths = HookEvents.names.flatMap { HookRunner.files(in: directory, for: $0) }.map(\.path) + dangling
        let relative = { (path: String) in TerminalText.field(String(path.dropFirst(directory.count + 1))) }
        let problems = paths.map { (path: $0, problem: HookFileProblem.of($0)) }
        let runnable = problems.filter { $0.problem == nil }.map { relative($0.path) }
        var said: [String] = []
        var fixes: [String] = []
        func say(_ what: String, _ fix: String, _ matches: (HookFileProblem) -> Bool) {
            let names = problems.filter { $0.problem.map(matches) ?? false }.map { relative($0.path) }
            guard !names.isEmpty else { return }
            said.append(what + ": " + names.joined(separator: ", "))
            fixes.append(fix.replacing("NAMES", with: names.joined(separator: " ")))
        }
        say("not executable, so never run", "chmod +x NAMES (those that should run)") { $0 == .notExecutable }
        for kind in ["a directory", "a FIFO", "a socket", "a device"] {
            say("\(kind), not a file, so never run", "put an executable file in place of NAMES (hooks are regular files)") {
                $0 == .notAFile(kind)
            }
        }
        say("a link to nothing, so never run", "point NAMES at an existing program, or remove them") {
            if case .danglingLink = $0 { return true } else { return false }
        }
        for interpreter in Set(problems.compactMap { entry -> String? in
            if case .missingInterpreter(let path)? = entry.problem { return path } else { return nil }
        }).sorted() {
            say("its #! interpreter \(TerminalText.field(interpreter)) is missing, so every run fails",
                "install \(TerminalText.field(interpreter)), or fix the #! line of NAMES") { $0 == .missingInterpreter(interpreter) }
        }
        check(said.isEmpty,
              "hooks in \(TerminalText.field(directory)): \(runnable.isEmpty ? "none" : runnable.joined(separator: ", "))"
                + said.map { "; " + $0 }.joined(),
              fix: fixes.joined(separator: "; "))
        if !others.isEmpty {
            note("not hooks (named after no event; telwatch never runs them): \(others.sorted().joined(separator: ", "))")
        }
    }

    /// The call history: readable, undamaged, of a schema this telwatch knows, and writable.
    /// `contacts =` of the config file: read as the daemon reads it.
    private mutating func checkContacts() {
        guard let path = options.contactsFile else { return }
        var problem: String?
        let contacts = ContactDirectory(path: path, loop: nil) { problem = $0 }
        if let problem {
            check(false, problem, fix: "export the contacts again (vCard, or NUMBER<TAB>NAME lines), or fix `contacts`")
        } else {
            check(true, "contacts \(path): \(contacts.book.count) numbers")
        }
    }

    private mutating func checkHistory() {
        guard options.history else { return note("call history is off (history = false, or --no-history)") }
        // A state directory that cannot be one was said on its own line.
        guard let directory = statePlace?.directory, StatePlace.notADirectory(directory) == nil else { return }
        let path = HistoryStore.path(in: directory)
        do {
            guard let reader = try HistoryReader(path: path, busyTimeout: 1) else {
                return note("call history \(path) will be created at the first start")
            }
            let damage = try reader.quickCheck()
            guard damage == "ok" else {
                let problem = HistoryProblem.damaged(damage)
                return check(false, "call history: " + problem.what(path), fix: problem.fix(path))
            }
            let summary = try reader.summary()
            // The service's history is the service's to write; this user reads it.
            let services = statePlace?.origin != .asked && statePlace?.origin != .user
            guard services || (access(path, W_OK) == 0 && access(directory, W_OK) == 0) else {
                let problem = HistoryProblem.readOnly(HistoryProblem.isOnReadOnlyFileSystem(path)
                                                      ? "a read-only file system" : "no write permission for this user")
                return check(false, "call history: " + problem.what(path), fix: problem.fix(path))
            }
            var filesystem = statvfs()
            if statvfs(directory, &filesystem) == 0,
               UInt64(filesystem.f_bavail) * UInt64(filesystem.f_frsize) < HistoryProblem.nearlyFull {
                return check(false, "call history: " + HistoryProblem.full.what(path), fix: HistoryProblem.full.fix(path))
            }
            let kept = options.historyKeep.map { "calls are kept \(Int(($0 / 86_400).rounded())) days" } ?? "every call is kept"
            check(true, "call history \(path): \(summary.calls) call\(summary.calls == 1 ? "" : "s"), "
                  + "\(summary.unseen) missed unseen; \(kept)")
        } catch {
            let problem = HistoryProblem(error, path: path)
            check(false, "call history: " + problem.what(path), fix: problem.fix(path))
        }
    }

    private mutating func checkStateDirectory() {
        guard let directory = statePlace?.directory else {
            check(false, "no state directory: neither $STATE_DIRECTORY, $XDG_STATE_HOME nor $HOME is set",
                  fix: "pass --state-dir DIR")
            return
        }
        if let why = StatePlace.notADirectory(directory) {
            return check(false, "state directory \(directory) \(why): telwatch runs without one (no run records, "
                         + "no call history)", fix: "move it away, or pass --state-dir a directory")
        }
        var info = stat()
        let services = statePlace?.origin != .asked && statePlace?.origin != .user
        if stat(directory, &info) == 0, HistoryProblem.isOnReadOnlyFileSystem(directory) {
            // No chown helps. The lock an earlier start left can still be taken (read-only), and
            // the history then keeps its calls until it can write them; without one, nothing can.
            let lock = directory + "/" + RunStateStore.instanceLockName
            check(false, "state directory \(directory) is on a read-only file system: "
                  + (access(lock, R_OK) == 0 ? "runs are not recorded, and the history keeps its calls in memory until it "
                     + "can write them" : "telwatch cannot take it (no \(RunStateStore.instanceLockName) from an earlier "
                     + "start): no run records, no call history"),
                  fix: "remount it read-write (mount -o remount,rw), or give telwatch a state directory on one that is "
                      + "(--state-dir)")
        } else if stat(directory, &info) == 0, services, access(directory, W_OK) != 0 {
            // The service's own directory: this user only reads it, and the service writes it.
            check(access(directory, R_OK | X_OK) == 0, "state directory \(directory) is readable",
                  fix: Access.joinHint(group: Access.group(of: directory)))
        } else if stat(directory, &info) == 0 {
            check(access(directory, W_OK) == 0, "state directory \(directory) is writable",
                  fix: "chown the directory to the user telwatch runs as")
        } else {
            note("state directory \(directory) will be created at the first run")
        }
    }
}
