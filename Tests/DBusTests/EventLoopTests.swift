import DBus
import Glibc
import Loop
import TestSupport
import XCTest

final class EventLoopTests: BusTestCase {
    /// Voluntary + involuntary context switches of the calling thread.
    func threadContextSwitches() -> Int {
        guard let file = fopen("/proc/thread-self/status", "r") else { return -1 }
        defer { fclose(file) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = fread(&bytes, 1, bytes.count, file)
        var total = 0
        for line in String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
            total += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return total
    }

    func testIdleLoopOnAQuietBusMakesNoWakeups() throws {
        // Subscribed and watching a name, like the daemon; then ten quiet seconds.
        connection.subscribe(MatchRule(sender: "org.freedesktop.ModemManager1",
                                       interface: "org.freedesktop.ModemManager1.Call")) { _ in }
        let watch = try connection.watchName("org.freedesktop.ModemManager1") { _ in }
        waitFor("the name watch") { watch.isResolved }
        // The bus answers in order: once GetId's answer is handled, so are the AddMatch replies.
        var answered = false
        connection.call(try Message.methodCall(destination: BusDaemon.name, path: BusDaemon.path,
                                               interface: BusDaemon.interface, member: "GetId"),
                        timeout: 5) { _ in answered = true }
        waitFor("the bus's answer to GetId") { answered }

        var fired = false
        let end = try loop.timer { fired = true }
        end.schedule(after: 10)
        let wakeupsBefore = loop.wakeups
        let switchesBefore = threadContextSwitches()
        waitFor("the ten-second timer", timeout: 15) { fired }
        let switches = threadContextSwitches() - switchesBefore
        XCTAssertEqual(loop.wakeups - wakeupsBefore, 1, "the loop woke only for its own timer")
        XCTAssertLessThanOrEqual(switches, 2, "one sleep and one timer wakeup in ten seconds, no more")
    }

    func testTimersFireOnTimeAndRepeat() throws {
        var fired: [Double] = []
        let start = monotonicNow()
        let timer = try loop.timer { fired.append(monotonicNow() - start) }
        timer.schedule(after: 0.1, repeating: 0.05)
        waitFor("three ticks", timeout: 5) { fired.count >= 3 }
        timer.cancel()
        XCTAssertFalse(timer.isArmed)
        // Never early; late only by what a loaded machine adds (the benchmarks measure precision).
        XCTAssertGreaterThanOrEqual(fired[0], 0.1)
        XCTAssertLessThan(fired[0], 1.0)
        // Repeats keep to the schedule (0.1, 0.15, 0.2 s after the start), not to when the first
        // tick happened to be handled: a first tick handled late does not push the others.
        XCTAssertGreaterThanOrEqual(fired[1], 0.15)
        XCTAssertGreaterThanOrEqual(fired[2], 0.2)
        XCTAssertLessThan(fired[2] - fired[0], 1.0)
        let count = fired.count
        loop.run(until: { false }, timeout: 0.2)
        XCTAssertEqual(fired.count, count, "a cancelled timer stays silent")
    }

    func testChildPidfdFiresWhenTheChildExitsAndIsReaped() throws {
        let start = monotonicNow()
        let pid = try Subprocess.spawn(["sh", "-c", "sleep 0.2; exit 3"])
        var exit: ChildExit?
        var at = 0.0
        let child = try loop.child(pid) { exit = $0; at = monotonicNow() - start }
        waitFor("the child", timeout: 5) { exit != nil }
        XCTAssertEqual(exit, .exited(3))
        XCTAssertGreaterThanOrEqual(at, 0.2)
        XCTAssertLessThan(at, 2.0, "the pidfd woke the loop when the child exited, not at some later poll")
        XCTAssertEqual(waitpid(pid, nil, WNOHANG), -1, "already reaped by the loop")
        XCTAssertFalse(child.send(SIGTERM), "no signal reaches a pid once its child is gone")

        let killed = try Subprocess.spawn(["sleep", "30"])
        var killedExit: ChildExit?
        let source = try loop.child(killed) { killedExit = $0 }
        XCTAssertTrue(source.send(SIGKILL))
        waitFor("the killed child", timeout: 5) { killedExit != nil }
        XCTAssertEqual(killedExit, .signaled(SIGKILL))
    }

    func testSignalsArriveThroughTheLoop() throws {
        var got: [Int32] = []
        let source = try loop.signals([SIGUSR1]) { got.append($0) }
        defer { source.cancel() }
        kill(getpid(), SIGUSR1)
        waitFor("SIGUSR1") { got == [SIGUSR1] }
    }

    /// A turn ends in declared phases, whatever order the hooks were added in: what a constructor
    /// adds cannot reorder a turn's I/O (docs/ARCHITECTURE.md, "A turn").
    func testHooksRunInTheirDeclaredPhaseOrderNotTheOrderAdded() throws {
        final class Recorder: LoopHook {
            let phase: TurnPhase
            let name: String
            let prepared: (String) -> Void
            init(_ phase: TurnPhase, _ name: String, _ prepared: @escaping (String) -> Void) {
                self.phase = phase
                self.name = name
                self.prepared = prepared
            }
            func prepare() -> Double? {
                prepared(name)
                return nil
            }
            func afterWait(now: Double) {}
        }
        var order: [String] = []
        let note: (String) -> Void = { order.append($0) }
        let hooks = [Recorder(.persist, "history", note), Recorder(.publish, "mqtt", note),
                     Recorder(.print, "stdout", note), Recorder(.dispatch, "bus", note),
                     Recorder(.persist, "run record", note)]
        for hook in hooks { loop.addHook(hook) }
        loop.iterate(maxWait: 0)
        XCTAssertEqual(order.filter { name in hooks.contains { $0.name == name } },
                       ["bus", "stdout", "mqtt", "history", "run record"])
        for hook in hooks { loop.removeHook(hook) }
    }

    func testDeferredWorkRunsBeforeTheNextWait() throws {
        var order: [String] = []
        loop.soon { order.append("first"); self.loop.soon { order.append("nested") } }
        loop.soon { order.append("second") }
        waitFor("deferred work", timeout: 1) { order.count == 3 }
        XCTAssertEqual(order, ["first", "second", "nested"])
    }

    func testSpawnedChildGetsNoExtraDescriptors() throws {
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)  // not close-on-exec on purpose
        defer { close(fds[0]); close(fds[1]) }
        let result = try runTool(["sh", "-c", "ls /proc/self/fd | wc -l"])
        // 0, 1, 2 and the fd ls itself opens for the directory.
        XCTAssertEqual(result.output.trimmingCharacters(in: .whitespacesAndNewlines), "4")
    }
}
