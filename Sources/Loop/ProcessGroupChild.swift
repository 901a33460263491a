import Glibc

/// A child started as the leader of its own process group and reaped through the loop's pidfd.
/// Stopping signals the whole group (a shell script's own children go too): SIGTERM, then
/// SIGKILL once `grace` has passed if anything of the group is still there.
public final class ProcessGroupChild {
    public let pid: pid_t
    private let loop: EventLoop
    private var watch: ChildSource?
    private var killTimer: TimerSource?
    /// Runs once, when the leader has been reaped (set it before the loop turns again).
    public var onExit: ((ChildExit) -> Void)?
    public private(set) var exit: ChildExit?
    public private(set) var isStopping = false

    public init(loop: EventLoop, arguments: [String], environment: [String], stdin: Subprocess.Output = .null,
                stdout: Subprocess.Output, stderr: Subprocess.Output) throws {
        // If telwatch itself is killed (SIGKILL, a crash), nobody is left to stop its children:
        // the kernel sends them SIGTERM then.
        pid = try Subprocess.spawn(arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr,
                                   newProcessGroup: true, deathSignal: SIGTERM)
        self.loop = loop
        do {
            // Weak: an owner that drops this object must reach deinit, which kills and reaps.
            watch = try loop.child(pid) { [weak self] status in self?.exited(status) }
        } catch {
            ProcessGroupChild.killAndReap(pid)
            exit = .signaled(SIGKILL)  // so that deinit does not reap it again
            throw error
        }
    }

    deinit {
        if exit == nil {
            ProcessGroupChild.killAndReap(pid)
        } else if isStopping && groupHasMembers {
            // Stopped, and dropped once its leader was reaped: what of the group outlived the
            // SIGTERM (a child that ignores it, or took it while being forked) would otherwise
            // lose the grace's SIGKILL with the timer and live on, orphaned.
            _ = Glibc.kill(-pid, SIGKILL)
        }
    }

    /// SIGTERM to the group now, SIGKILL after `grace`; the exit handler runs once the leader is reaped.
    public func stop(grace: Double) {
        guard !isStopping else { return }
        isStopping = true
        guard exit == nil else { return }
        _ = Glibc.kill(-pid, SIGTERM)
        do {
            killTimer = try loop.timer { [weak self] in self?.graceOver() }
            killTimer?.schedule(after: grace)
        } catch {
            // Without a timer there is no grace to give.
            _ = Glibc.kill(-pid, SIGKILL)
        }
    }

    /// SIGKILL to the group now (a shutdown that ran out of time).
    public func kill() {
        isStopping = true
        if exit == nil || groupHasMembers { _ = Glibc.kill(-pid, SIGKILL) }
    }

    private var groupHasMembers: Bool { Glibc.kill(-pid, 0) == 0 }

    private func exited(_ status: ChildExit) {
        exit = status
        // A group member that outlived its leader still gets its SIGKILL when the grace ends;
        // the leader's pid cannot be reused while the group exists, so signalling it stays safe.
        if !(isStopping && groupHasMembers) { dropKillTimer() }
        let handler = onExit
        onExit = nil
        handler?(status)
    }

    private func graceOver() {
        if exit == nil || groupHasMembers { _ = Glibc.kill(-pid, SIGKILL) }
        dropKillTimer()
    }

    private func dropKillTimer() {
        killTimer?.cancel()
        killTimer = nil
    }

    private static func killAndReap(_ pid: pid_t) {
        _ = Glibc.kill(-pid, SIGKILL)
        var status: Int32 = 0
        // SIGKILL makes this wait short; a child left unreaped would stay a zombie.
        _ = waitpid(pid, &status, 0)
    }
}
