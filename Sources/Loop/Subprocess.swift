import CLoop
import Glibc

/// Starting child processes the way a daemon should: an explicit argv and environment (never a
/// shell), optionally its own process group, a clean signal mask and dispositions, and no
/// inherited descriptors beyond 0–2. With `deathSignal` the kernel signals the child when
/// telwatch dies, however it dies, with no window between the fork and that promise
/// (`cloop_spawn_guarded`). Pair it with `EventLoop.child` to reap it.
public enum Subprocess {
    public enum Output: Sendable {
        case inherit
        case null
        case fd(Int32)

        var descriptor: Int32 {
            switch self {
            case .inherit: return -1
            case .null: return -2
            case .fd(let fd): return fd
            }
        }
    }

    /// Spawns `arguments[0]` (looked up in the child's PATH when it has no slash) and returns its pid.
    public static func spawn(
        _ arguments: [String], environment: [String]? = nil, stdin: Output = .null,
        stdout: Output = .inherit, stderr: Output = .inherit, newProcessGroup: Bool = true,
        deathSignal: Int32? = nil
    ) throws(SystemError) -> pid_t {
        guard let program = arguments.first, !program.isEmpty else {
            throw SystemError(call: "spawn", errno: EINVAL)
        }
        let environment = environment ?? currentEnvironment()
        guard let path = resolve(program, environment: environment) else {
            throw SystemError(call: "spawn \(program)", errno: ENOENT)
        }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        let fds: [Int32] = [stdin.descriptor, stdout.descriptor, stderr.descriptor]
        let pid = fds.withUnsafeBufferPointer { fds in
            cloop_spawn_guarded(path, &argv, &envp, fds.baseAddress, newProcessGroup ? 1 : 0, deathSignal ?? 0)
        }
        guard pid > 0 else { throw SystemError(call: "spawn \(program)", errno: -pid) }
        return pid
    }

    /// `program` itself when it names a path, else the first executable of that name in PATH
    /// (the child's, as a shell started with that environment would search it).
    static func resolve(_ program: String, environment: [String]) -> String? {
        if program.contains("/") { return program }
        let path = environment.last { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + program
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
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
