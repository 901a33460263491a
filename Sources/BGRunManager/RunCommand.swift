import DBus
import Glibc
import Loop

/// The user's command for the whole life of one run: started with the run, given SIGTERM (its
/// whole process group) when the run ends, SIGKILL after `grace`, and always reaped. It is an argv,
/// never a shell string. A command that exits while its run goes on is reported, not restarted:
/// the run itself (the lock) does not depend on it.
public final class RunCommand {
    public let pid: pid_t
    /// The command as the kernel knows it, recorded so that a later telwatch can stop it safely.
    public let identity: ProcessIdentity?
    private let child: ProcessGroupChild
    private var stopWaiters: [() -> Void] = []

    /// `onExit(status, early)`: `early` when it ended before the run asked it to stop.
    init(loop: EventLoop, arguments: [String], environment: [String], stdout: Subprocess.Output,
         stderr: Subprocess.Output, onExit: @escaping (ChildExit, Bool) -> Void) throws {
        child = try ProcessGroupChild(loop: loop, arguments: arguments, environment: environment,
                                      stdout: stdout, stderr: stderr)
        pid = child.pid
        identity = ProcessIdentity.of(child.pid)
        child.onExit = { [weak self] status in
            guard let self else { return }
            onExit(status, !self.child.isStopping)
            let waiters = self.stopWaiters
            self.stopWaiters.removeAll()
            for waiter in waiters { waiter() }
        }
    }

    public var isRunning: Bool { child.exit == nil }

    /// Stops it (TERM, then KILL after `grace`); `done` runs once it has been reaped.
    func stop(grace: Double, then done: @escaping () -> Void) {
        guard isRunning else { return done() }
        stopWaiters.append(done)
        child.stop(grace: grace)
    }

    /// Out of time at shutdown: SIGKILL now.
    func kill() { child.kill() }
}
