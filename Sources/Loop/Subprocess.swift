import CLoop
import Glibc

/// Starting child processes the way a daemon should: `posix_spawn` with an explicit argv and
/// environment (never a shell), its own process group, a clean signal mask and dispositions,
/// and no inherited descriptors beyond 0–2. Pair it with `EventLoop.child` to reap it.
public enum Subprocess {
    public enum Output: Sendable {
        case inherit
        case null
        case fd(Int32)
    }

    /// Spawns `arguments[0]` (looked up in PATH when it has no slash) and returns its pid.
    public static func spawn(
        _ arguments: [String], environment: [String]? = nil, stdin: Output = .null,
        stdout: Output = .inherit, stderr: Output = .inherit, newProcessGroup: Bool = true
    ) throws -> pid_t {
        guard let program = arguments.first, !program.isEmpty else {
            throw SystemError(call: "spawn", errno: EINVAL)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, output) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch output {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .fd(let fd): posix_spawn_file_actions_adddup2(&actions, fd, target)
            }
        }
        // Whatever a caller forgot to mark close-on-exec still stays here.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        let environment = environment ?? currentEnvironment()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result: Int32 = program.contains("/")
            ? posix_spawn(&pid, program, &actions, &attributes, &argv, &envp)
            : posix_spawnp(&pid, program, &actions, &attributes, &argv, &envp)
        guard result == 0 else { throw SystemError(call: "spawn \(program)", errno: result) }
        return pid
    }

    /// This process's environment as `KEY=value` strings.
    public static func currentEnvironment() -> [String] {
        var out: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            out.append(String(cString: entry))
            cursor += 1
        }
        return out
    }
}
