import BGRunManager
import CallMonitor
import Contacts
import Glibc
import Loop
import Processes

public struct ScopedCommandSettings {
    /// In the order given; the same scope and argv twice is one command.
    public var commands: [ScopedCommand]
    /// Between SIGTERM and SIGKILL of a command whose scope has emptied.
    public var grace: Double
    public var stdout: Subprocess.Output
    public var stderr: Subprocess.Output
    /// The environment every command starts from; the call event's `TELWATCH_` variables are added.
    public var baseEnvironment: [String]

    public init(commands: [ScopedCommand] = [], grace: Double = 5, stdout: Subprocess.Output = .inherit,
                stderr: Subprocess.Output = .inherit, baseEnvironment: [String] = Subprocess.currentEnvironment()) {
        self.commands = commands
        self.grace = grace
        self.stdout = stdout
        self.stderr = stderr
        self.baseEnvironment = baseEnvironment
    }
}

/// Runs call-scoped commands: each starts when the first call enters its scope (ringing, held,
/// any live call…) and is stopped the moment no call is in it any more: SIGTERM to its process
/// group, SIGKILL after the grace, always reaped (`ProcessGroupChild`, as the run command).
/// A command is a child of telwatch with a death signal, so a telwatch killed outright does not
/// leave it behind either. It gets the `TELWATCH_*` environment of the call event that started
/// it (`CallEnvironment`) and `TELWATCH_SCOPE`; its stdin stays open (and empty) while it should
/// run.
///
/// A command is not a hook: hooks are one-shot and queued per call, these run beside them and
/// nothing ever waits for one. A command that ends by itself while its scope lasts is not started
/// again until the scope has emptied and filled again (a failure is said on stderr); one that
/// cannot be started is said once. Like the history, this sink reports through `report` and sends
/// no events.
public final class ScopedCommandSink: EventSink {
    /// A reloaded configuration: commands no longer configured stop, new ones whose scope is
    /// occupied start at once.
    public var settings: ScopedCommandSettings {
        didSet {
            settings.commands = ScopedCommandSink.unique(settings.commands)
            if oldValue.commands.isEmpty && !settings.commands.isEmpty { learnCalls() }
            reconcile(trigger: nil)
            if settings.commands.isEmpty { forgetCalls() }
        }
    }

    /// Asked for the calls live now when a reload brings the first command (with none configured
    /// the sink follows no call, so a storm costs it nothing), and which run a call holds.
    private weak var session: SinkSession?

    private struct LiveCall {
        var call: CallSnapshot
        var event: CallHookEvent
        var previous: CallState?
        var liveCalls: Int
        /// The number's contact, as its event's delivery looked it up.
        var contact: String?
        /// Order of arrival, so that the call a command describes is the first in its scope.
        var sequence: UInt64
    }

    private let loop: EventLoop
    /// For the calls learned from the session when a reload brings the first command.
    private let contacts: ContactDirectory?
    private let report: (String) -> Void
    private var calls: [String: LiveCall] = [:]
    /// How many of `calls` are in each finer state: a scope is occupied while its count is above
    /// zero (`live`: while there is a call), and only a count that leaves or reaches zero can
    /// start or stop anything, so most events cost a dictionary update and nothing more.
    private var callsIn: [CallDetail: Int] = [:]
    private var sequence: UInt64 = 0
    /// One entry per command whose scope is occupied: its child, or nil when it could not start.
    private var running: [ScopedCommand: ProcessGroupChild?] = [:]
    /// Commands told to stop and not yet reaped.
    private var stopping: [ObjectIdentifier: ProcessGroupChild] = [:]
    /// The write end of each command's stdin, held until it is reaped.
    private var stdinHolds: [ObjectIdentifier: Int32] = [:]
    private var isFinishing = false
    private var finishWaiters: [() -> Void] = []

    public init(loop: EventLoop, settings: ScopedCommandSettings, contacts: ContactDirectory?, session: SinkSession?,
                report: @escaping (String) -> Void) {
        self.loop = loop
        self.session = session
        self.settings = ScopedCommandSettings(
            commands: ScopedCommandSink.unique(settings.commands), grace: settings.grace, stdout: settings.stdout,
            stderr: settings.stderr, baseEnvironment: settings.baseEnvironment)
        self.contacts = contacts
        self.report = report
    }

    deinit {
        for hold in stdinHolds.values { close(hold) }
    }

    /// Commands running now (not those being stopped).
    public var runningCount: Int { running.values.filter { $0.map { $0.exit == nil } ?? false }.count }

    public func receive(_ delivery: Delivery) {
        guard case .calls(let events, _) = delivery.event, !settings.commands.isEmpty else { return }
        let liveCalls = delivery.liveCalls
        for event in events {
            switch event {
            case .transition(let call, let previous):
                let changed = call.state == .disconnected ? leave(call.id)
                    : enter(call, event: CallHookEvent(call.state), previous: previous, liveCalls: liveCalls,
                            contact: delivery.contact(of: call.number))
                if changed { reconcile(trigger: call.id) }
            case .updated(let call):
                guard calls[call.id] != nil else { continue }
                if enter(call, event: .updated, previous: call.state, liveCalls: liveCalls,
                         contact: delivery.contact(of: call.number)) {
                    reconcile(trigger: call.id)
                }
            case .withdrawn(_, let id):
                if leave(id) { reconcile(trigger: nil) }
            case .idle:
                // Every call has ended: nothing is in any scope.
                guard !calls.isEmpty else { continue }
                calls.removeAll()
                callsIn.removeAll()
                reconcile(trigger: nil)
            case .missed, .busy, .announced:
                break
            }
        }
    }

    /// Stops every command (SIGTERM, SIGKILL after the grace); `done` runs once all are reaped,
    /// so within the grace and a loop turn. May be called again (each `done` runs).
    public func finish(then done: @escaping () -> Void) {
        isFinishing = true
        calls.removeAll()
        callsIn.removeAll()
        reconcile(trigger: nil)
        if stopping.isEmpty { done() } else { finishWaiters.append(done) }
    }

    /// Records a live call's latest event; true when a scope became occupied or empty.
    private func enter(_ call: CallSnapshot, event: CallHookEvent, previous: CallState?, liveCalls: Int,
                       contact: String?) -> Bool {
        let known = calls[call.id]
        if known == nil { sequence += 1 }
        calls[call.id] = LiveCall(call: call, event: event, previous: previous, liveCalls: liveCalls, contact: contact,
                                  sequence: known?.sequence ?? sequence)
        var changed = known == nil && calls.count == 1
        if known?.call.detail != call.detail {
            if let old = known?.call.detail { changed = count(old, by: -1) || changed }
            if let new = call.detail { changed = count(new, by: 1) || changed }
        }
        return changed
    }

    private func learnCalls() {
        let live = (session?.liveCalls ?? []).filter { $0.state != .disconnected }
        for call in live {
            _ = enter(call, event: CallHookEvent(call.state), previous: nil, liveCalls: live.count,
                      contact: contacts?.name(for: call.number))
        }
    }

    private func forgetCalls() {
        calls.removeAll()
        callsIn.removeAll()
    }

    /// Forgets a call that ended; true when a scope became empty.
    private func leave(_ id: String) -> Bool {
        guard let known = calls.removeValue(forKey: id) else { return false }
        let emptied = known.call.detail.map { count($0, by: -1) } ?? false
        return emptied || calls.isEmpty
    }

    /// Changes how many calls are in `detail`; true when that number left or reached zero.
    private func count(_ detail: CallDetail, by step: Int) -> Bool {
        let now = (callsIn[detail] ?? 0) + step
        callsIn[detail] = now > 0 ? now : nil
        return now == 0 || (now == 1 && step > 0)
    }

    /// Stops what has no call in its scope (or is no longer configured), then starts what has one
    /// and is not running: a ring ends before the call's own command begins. `trigger`: the call
    /// whose event this is, described to what it starts.
    private func reconcile(trigger: String?) {
        for (command, child) in running
        where isFinishing || !settings.commands.contains(command) || !isOccupied(command.scope) {
            stop(command, child)
        }
        guard !isFinishing else { return }
        for command in settings.commands where running[command] == nil {
            if let call = describedCall(for: command.scope, trigger: trigger) { start(command, for: call) }
        }
    }

    private func isOccupied(_ scope: CallScope) -> Bool {
        guard let detail = scope.detail else { return !calls.isEmpty }
        return callsIn[detail] != nil
    }

    /// The call a command of `scope` is told about: the triggering call when it is in the scope,
    /// else the first to have arrived of those that are.
    private func describedCall(for scope: CallScope, trigger: String?) -> LiveCall? {
        if let trigger, let call = calls[trigger], scope.includes(call.call.detail) { return call }
        var first: LiveCall?
        for call in calls.values where scope.includes(call.call.detail) {
            if first == nil || call.sequence < first!.sequence { first = call }
        }
        return first
    }

    private func start(_ command: ScopedCommand, for live: LiveCall) {
        let call = live.call
        let variables = [("TELWATCH_EVENT", live.event.rawValue), ("TELWATCH_SCOPE", command.scope.rawValue)]
            + CallEnvironment.variables(of: call, previous: live.previous, liveCalls: live.liveCalls,
                                        runID: session?.runID(heldBy: call.id), contact: live.contact)
        let environment = ChildEnvironment.make(base: settings.baseEnvironment, variables: variables)
        // Its stdin is a pipe nobody writes to, open while the command lives (and telwatch with
        // it): a program that ends on end-of-file, as `fbcli` does (its "press RETURN"), runs
        // until it is stopped, and ends by itself should telwatch die.
        var ends: [Int32] = [-1, -1]
        // Close-on-exec at once: one thread, and every spawn closes descriptors above 2 anyway.
        guard pipe(&ends) == 0, fcntl(ends[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(ends[1], F_SETFD, FD_CLOEXEC) == 0 else {
            let failure = SystemError.last("pipe")
            if ends[0] >= 0 { close(ends[0]); close(ends[1]) }
            running[command] = .some(nil)
            return report("\(command.label): could not start: \(failure)")
        }
        defer { close(ends[0]) }
        do {
            let child = try ProcessGroupChild(loop: loop, arguments: command.arguments, environment: environment,
                                              stdin: .fd(ends[0]), stdout: settings.stdout, stderr: settings.stderr)
            child.onExit = { [weak self, unowned child] status in self?.exited(command, child, status) }
            running[command] = child
            stdinHolds[ObjectIdentifier(child)] = ends[1]
        } catch {
            close(ends[1])
            running[command] = .some(nil)
            report("\(command.label): could not start: \(error)")
        }
    }

    private func stop(_ command: ScopedCommand, _ child: ProcessGroupChild?) {
        running.removeValue(forKey: command)
        guard let child, child.exit == nil else { return }
        stopping[ObjectIdentifier(child)] = child
        child.stop(grace: settings.grace)
    }

    private func exited(_ command: ScopedCommand, _ child: ProcessGroupChild, _ status: ChildExit) {
        if let hold = stdinHolds.removeValue(forKey: ObjectIdentifier(child)) { close(hold) }
        if stopping.removeValue(forKey: ObjectIdentifier(child)) != nil {
            if stopping.isEmpty && isFinishing {
                let waiters = finishWaiters
                finishWaiters.removeAll()
                for waiter in waiters { waiter() }
            }
            return
        }
        // Ended by itself while its scope lasts: kept as the scope's command (not started again
        // until the scope empties); a clean end is a command that had done its job.
        if status != .exited(0) {
            report("\(command.label) ended by itself (\(status)) while its calls went on; it is started again "
                   + "the next time a call enters \(command.scope.rawValue)")
        }
    }

    private static func unique(_ commands: [ScopedCommand]) -> [ScopedCommand] {
        var seen = Set<ScopedCommand>()
        return commands.filter { !$0.arguments.isEmpty && seen.insert($0).inserted }
    }
}
