"""telwatch-bench's figure 9, the phone actions (issue 13): ring -> TriggerFeedback sent, hangup ->
EndFeedback sent, and what the actions cost telwatch in CPU and memory.

Beside the phase's system bus (the emitter as ModemManager, dbusmock's logind) it starts a second
private bus as the phone user's session bus, with Debian's feedbackd on it (the tests' theme of
short Dummy feedbacks, Tests/Fixtures/feedbackd/) and dbusmock's notification_daemon, and
`dbus-monitor --profile` on feedbackd's interface: the times are dbus-monitor's, the ring's the
emitter's (both wall clock, µs), as figure 7 does with logind's Inhibit."""

import os
import select
import subprocess
import time

from benchlib import REPO, BenchError, LineReader, MiniBus, cpu_ns, log, median, start_bus, tail, wait_lines

FEEDBACKD = "/usr/libexec/feedbackd"
THEME = os.path.join(REPO, "Tests", "Fixtures", "feedbackd", "theme.json")


def _wait_name(address, name, proc, log_path, timeout=10):
    bus = MiniBus(address)
    try:
        deadline = time.monotonic() + timeout
        while not bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                           "NameHasOwner", name)[0]:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"{name} did not appear on the session bus: {tail(log_path)}")
            time.sleep(0.01)
    finally:
        bus.close()


class FeedbackWatch:
    """dbus-monitor --profile on org.sigxcpu.Feedback's method calls: (time s, member) as they come."""

    def __init__(self, tracker, address, directory):
        self.tracker = tracker
        argv = ["dbus-monitor", "--address", address, "--profile",
                "type='method_call',interface='org.sigxcpu.Feedback'"]
        with open(os.path.join(directory, "dbus-monitor-feedback.stderr"), "wb") as err:
            self.p = tracker.spawn("dbus-monitor", argv, stdout=subprocess.PIPE, stderr=err)
        self.reader = LineReader(self.p.stdout)
        self.seen = []
        wait_lines({self.reader: "dbus-monitor (feedback)"},
                   lambda rd, line: line.startswith(b"sig\t") and line.endswith((b"\tNameAcquired", b"\tNameLost")), 15)

    def wait(self, member, after_s, timeout=5):
        """The time (s) of the first `member` call sent after `after_s`, or None."""
        deadline = time.monotonic() + timeout
        while True:
            for t, m in self.seen:
                if m == member and t >= after_s:
                    self.seen = [(t2, m2) for t2, m2 in self.seen if t2 > t]
                    return t
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.reader.fd], [], [], left)
            for line in self.reader.read() if r else []:
                f = line.decode(errors="replace").split("\t")
                if f[0] == "mc" and len(f) >= 8:
                    self.seen.append((float(f[1]), f[7]))

    def stop(self):
        self.tracker.stop(self.p)


def _summary(values):
    if not values:
        return None
    v = sorted(values)
    return {"samples": len(v), "p50": round(median(v), 3), "max": round(v[-1], 3)}


def _lifecycles(env, tw, count, timeout):
    """`count` rings hung up unanswered (each a missed call); waits for telwatch's last missed line."""
    for _ in range(count):
        env.command("ring")
        env.command("hangup")
    missed = 0
    deadline = time.monotonic() + timeout
    while missed < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BenchError(f"telwatch reported {missed} of {count} missed calls within {timeout:g} s")
        missed += sum(1 for obj, _, _, _ in tw.lines(left) if obj is not None and obj.get("event") == "missed")


def _telwatch(Telwatch, tracker, env, binary, extra):
    """The suite's telwatch with `extra` options for this one instance, once it is ready."""
    saved = Telwatch.extra
    Telwatch.extra = saved + extra
    try:
        tw = Telwatch(tracker, env, binary)
    finally:
        Telwatch.extra = saved
    tw.wait_ready()
    return tw


def phase_actions(args, tracker, tmp, binary, Env, Telwatch, memory):
    if not os.access(FEEDBACKD, os.X_OK):
        log(f"actions: skipped: no {FEEDBACKD} (scripts/setup --tests installs feedbackd)")
        return {"skipped": f"no {FEEDBACKD}"}
    env = Env(tracker, tmp, "actions")
    watch = None
    try:
        sdir = os.path.join(env.dir, "session")
        os.makedirs(os.path.join(sdir, "home"))
        address, _ = start_bus(tracker, sdir)
        senv = {k: v for k, v in os.environ.items() if not k.startswith("DBUS_")}
        senv.update({"DBUS_SESSION_BUS_ADDRESS": address, "FEEDBACK_THEME": THEME, "GSETTINGS_BACKEND": "memory",
                     "HOME": os.path.join(sdir, "home")})
        fb_log = os.path.join(sdir, "feedbackd.log")
        with open(fb_log, "wb") as out:
            feedbackd = tracker.spawn("feedbackd", [FEEDBACKD], stdout=out, stderr=subprocess.STDOUT, env=senv)
        _wait_name(address, "org.sigxcpu.Feedback", feedbackd, fb_log)
        nd_log = os.path.join(sdir, "notifications.log")
        with open(nd_log, "wb") as out:
            notifications = tracker.spawn("notification_daemon", [
                "/usr/bin/python3", "-m", "dbusmock", "--session", "-t", "notification_daemon",
                "-l", os.path.join(sdir, "notifications-calls.log")], stdout=out, stderr=subprocess.STDOUT, env=senv)
        _wait_name(address, "org.freedesktop.Notifications", notifications, nd_log)
        watch = FeedbackWatch(tracker, address, sdir)
        actions = ["--feedback", "--call-audio", "--notify", "--session-bus", address]

        # Ring -> TriggerFeedback, hangup -> EndFeedback, one call at a time on an idle telwatch.
        tw = _telwatch(Telwatch, tracker, env, binary, actions)
        trigger_ms, end_ms = [], []
        for _ in range(args.rings):
            tw.drain()
            time.sleep(args.ring_gap)
            ring_ns = int(env.command("ring").split()[3])
            t = watch.wait("TriggerFeedback", ring_ns / 1e9)
            if t is not None:
                trigger_ms.append(t * 1e3 - ring_ns / 1e6)
            hang_ns = int(env.command("hangup").split()[3])
            t = watch.wait("EndFeedback", hang_ns / 1e9)
            if t is not None:
                end_ms.append(t * 1e3 - hang_ns / 1e6)
            watch.wait("TriggerFeedback", hang_ns / 1e9)   # the missed call's own feedback
        tw.stop()

        # The cost: the same missed calls with the actions off, then on.
        cost = {}
        for name, extra in (("off", []), ("on", actions)):
            tw = _telwatch(Telwatch, tracker, env, binary, extra)
            time.sleep(0.2)
            # schedstat's ns: /proc/PID/stat's 10 ms ticks are too coarse for a few hundred calls.
            before = cpu_ns(tw.pid)
            _lifecycles(env, tw, args.action_lifecycles, args.timeout)
            cost[name] = {"cpu_ms": round((cpu_ns(tw.pid) - before) / 1e6, 2), **memory(tw.pid)}
            tw.stop()
    finally:
        if watch:
            watch.stop()
        env.close()
    n = args.action_lifecycles
    res = {"rings": args.rings, "ring_to_trigger_ms": _summary(trigger_ms), "hangup_to_end_ms": _summary(end_ms),
           "missed": args.rings - len(trigger_ms), "lifecycles": n, "cost": cost,
           "cpu_us_per_call_added": round((cost["on"]["cpu_ms"] - cost["off"]["cpu_ms"]) * 1e3 / n, 1),
           "rss_added_mib": round(cost["on"].get("VmRSS", 0) - cost["off"].get("VmRSS", 0), 2)}
    t = res["ring_to_trigger_ms"] or {}
    log(f"actions: ring -> TriggerFeedback p50 {t.get('p50')} ms, max {t.get('max')} ms; the actions cost "
        f"{res['cpu_us_per_call_added']} µs CPU per missed call and {res['rss_added_mib']:+.2f} MiB RSS")
    return res


def action_targets(ac):
    """[(name, value text, target text, met)] for the report."""
    if not ac or ac.get("skipped"):
        return []
    t, e = ac["ring_to_trigger_ms"], ac["hangup_to_end_ms"]
    return [
        ("actions: ring → TriggerFeedback sent", f"{t['p50']:.2f} ms p50, {t['max']:.2f} max" if t else "-",
         "< 50 ms", t is not None and t["max"] < 50 and not ac["missed"]),
        ("actions: hangup → EndFeedback sent", f"{e['p50']:.2f} ms p50, {e['max']:.2f} max" if e else "-",
         "< 50 ms", e is not None and e["max"] < 50),
        # A missed call with every action on is 4 method calls on the session bus (ring, its end,
        # the missed-call feedback, the notification) and their answers.
        ("actions: CPU per missed call, on vs off", f"{ac['cpu_us_per_call_added']:+.0f} µs", "< 1 ms",
         ac["cpu_us_per_call_added"] < 1000),
        ("actions: RSS, on vs off", f"{ac['rss_added_mib']:+.2f} MiB", "< 1 MiB", ac["rss_added_mib"] < 1),
    ]
