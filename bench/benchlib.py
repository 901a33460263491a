"""Shared pieces of telwatch's benchmark harnesses (bench/dbus-storm, bench/telwatch-bench).

Process bookkeeping (every process started is recorded and killed by PID on every exit path),
private buses, the emitter (bench/emitter.c), dbus-monitor --profile as a consumer, /proc
readings, and a minimal D-Bus client for polling (standard library only: the harnesses run on
Debian's /usr/bin/python3 with nothing else assumed).
"""

import contextlib
import ctypes
import fcntl
import os
import select
import shlex
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
EMITTER_SRC = os.path.join(HERE, "emitter.c")
EMITTER_BIN = os.path.join(HERE, "out", "emitter")
BUS_CONF = os.path.join(REPO, "Tests", "Fixtures", "bus.conf")

MM_PREFIX = "/org/freedesktop/ModemManager1"
CALL_RULE = "type='signal',interface='org.freedesktop.ModemManager1.Call'"
PROPS_RULE = ("type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
              "path_namespace='/org/freedesktop/ModemManager1'")
VOICE_RULE = "type='signal',interface='org.freedesktop.ModemManager1.Modem.Voice'"
# In `dbus-monitor --profile` output every emitted signal's line carries its path in a tab-separated
# column; the monitor's own NameAcquired/NameLost lines have path /org/freedesktop/DBus.
SIGNAL_MARK = b"\t/org/freedesktop/ModemManager1/"

CLK_TCK = os.sysconf("SC_CLK_TCK")
BATCH_S = 0.004   # how often a harness reads dbus-monitor's output during a storm

PROG = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "bench"


class BenchError(Exception):
    pass


def log(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@contextlib.contextmanager
def signals_deferred():
    """Ctrl-C/TERM/HUP wait until the block is over: a process is never started without being
    recorded, and cleanup is never cut short (the signal is delivered again right after).
    Done with handlers, not by blocking the signals: a blocked mask would be inherited by every
    child started in the block (exec keeps it), and dbus-daemon, dbus-monitor or dbusmock would
    then ignore the SIGTERM that ends them."""
    pending = []

    def remember(signum, frame):
        pending.append(signum)
    old = {sig: signal.signal(sig, remember) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if pending:
            os.kill(os.getpid(), pending[0])


def install_stop_handlers():
    """SIGINT/TERM/HUP become KeyboardInterrupt, so every `finally` (and Tracker.kill_all) runs.
    SIGINT too: a shell's background job starts with it ignored."""
    def on_signal(signum, frame):
        raise KeyboardInterrupt
    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)


_libc = None


def _die_with_parent():
    """preexec_fn: the kernel SIGKILLs the child if this harness dies without cleaning up."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG


class Tracker:
    """Every process this run started; kill_all() ends each one by PID (last started first)."""

    def __init__(self):
        self.children = []   # (name, Popen) — each started in its own session (pgid == pid)

    def spawn(self, name, argv, pdeathsig=True, **kw):
        """pdeathsig=False spawns through vfork (no preexec_fn): cheaper, used where the
        spawn itself is being timed; such a child is short-lived and still killed by PID."""
        with signals_deferred():
            try:
                # restore_signals (default) gives the child default dispositions; its own session
                # keeps a terminal's Ctrl-C away from it: this harness ends it, by PID.
                kw.setdefault("stdin", subprocess.DEVNULL)
                p = subprocess.Popen(argv, start_new_session=True,
                                     preexec_fn=_die_with_parent if pdeathsig else None, **kw)
            except OSError as e:
                raise BenchError(f"cannot start {name} ({argv[0]}): {e}")
            self.children.append((name, p))
        return p

    def stop(self, p, sig=signal.SIGTERM, timeout=2):
        """Ends one child by PID (its process group), then SIGKILL after `timeout`; reaps it."""
        with signals_deferred():
            _stop(p, sig, timeout)
            self.children = [(n, c) for (n, c) in self.children if c is not p]

    def kill_all(self):
        with signals_deferred():
            for name, p in reversed(self.children):
                if p.poll() is None:
                    try:
                        os.killpg(p.pid, signal.SIGTERM)
                    except ProcessLookupError:
                        pass
            deadline = time.monotonic() + 2
            for name, p in reversed(self.children):
                _stop(p, None, max(0.0, deadline - time.monotonic()))
            self.children.clear()


def _stop(p, sig, timeout):
    if p.poll() is None and sig is not None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    for f in (p.stdin, p.stdout, p.stderr):
        if f:
            with contextlib.suppress(OSError):
                f.close()


def proc_stat_fields(pid):
    """/proc/PID/stat after the command name: fields[0] is field 3 (state)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_seconds(pid):
    """utime+stime of a process (running or zombie) from /proc/PID/stat, in seconds."""
    fields = proc_stat_fields(pid)
    if fields is None:
        return None
    # utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_split(pid):
    """(utime, stime) in seconds from /proc/PID/stat, or None."""
    fields = proc_stat_fields(pid)
    if fields is None:
        return None
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def cpu_ns(pid):
    """On-CPU time in ns from /proc/PID/schedstat (finer than /proc/PID/stat's ticks), or None."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def proc_status(pid):
    """Selected /proc/PID/status fields: memory in KiB, context switches as counts."""
    want = {"VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "VmSize", "Threads",
            "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"}
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in want:
                    out[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return out


def try_reap(p):
    """If p has exited: read its CPU while it is still a zombie, reap it, return (cpu, rc).
    Returns None while it is still running. Never blocks."""
    try:
        info = os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
    except ChildProcessError:
        return (None, p.returncode)
    if info is None:
        return None
    cpu = cpu_seconds(p.pid)
    return (cpu, p.wait())


# ---------------------------------------------------------------- what runs

DEBIAN_ROOT = os.path.join(REPO, "scripts", "debian-root")


def daemon_command(executable, root=None):
    """The words that start a telephony daemon: the machine's own, or the one in the Debian root
    `root` (scripts/debian-root run, which execs at every step: the PID the harness kills and the
    environment stay the daemon's; the root sees this machine's /tmp, where the buses and the
    modem's sockets live)."""
    return [DEBIAN_ROOT, "run", root, executable] if root else [executable]


def check_daemon(executable, root=None):
    """None when `executable` can be started as chosen, else what is missing. A root must be made
    already: `debian-root run` would otherwise spend minutes making it inside a bounded wait."""
    if not root:
        return None if os.access(executable, os.X_OK) else f"{executable} is missing (scripts/setup --tests)"
    r = subprocess.run([DEBIAN_ROOT, "path", root], capture_output=True, text=True, timeout=10)
    path = r.stdout.strip()
    if r.returncode != 0 or not os.path.exists(os.path.join(path, ".telwatch-root-complete")):
        return f"the Debian root {root} is not made (scripts/debian-root ensure {root}) {r.stderr.strip()}"
    if not os.access(path + executable, os.X_OK):
        return f"the Debian root {root} has no {executable}"
    return None


def telwatch_command(path, command=None):
    """The words that start telwatch: `command` split like a shell would (a relative first word is
    taken from the repository's root, e.g. 'scripts/debian-root run trixie-arm64-run
    /usr/bin/telwatch'), else the binary at `path`."""
    if not command:
        return [path]
    words = shlex.split(command)
    if "/" in words[0] and not os.path.isabs(words[0]):
        words[0] = os.path.join(REPO, words[0])
    return words


# ---------------------------------------------------------------- pieces

def build_emitter():
    if os.path.exists(EMITTER_BIN) and os.path.getmtime(EMITTER_BIN) >= os.path.getmtime(EMITTER_SRC):
        return
    os.makedirs(os.path.dirname(EMITTER_BIN), exist_ok=True)
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "dbus-1"], check=True,
                               capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        raise BenchError(f"pkg-config dbus-1 failed (is libdbus-1-dev installed?): {e}")
    cmd = ["cc", "-O2", "-Wall", "-o", EMITTER_BIN, EMITTER_SRC] + flags
    log("building emitter: " + " ".join(shlex.quote(a) for a in cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise BenchError(f"building the emitter failed:\n{r.stdout}{r.stderr}")


def start_bus(tracker, tmp):
    """A private dbus-daemon (Tests/Fixtures/bus.conf) on a socket in `tmp`, as a tracked child
    (not --fork: it is killed by PID like everything else, and by the kernel if we die).
    Returns (address, pid)."""
    if not os.path.exists(BUS_CONF):
        raise BenchError(f"missing {BUS_CONF}")
    sock = os.path.join(tmp, "bus")
    argv = ["dbus-daemon", f"--config-file={BUS_CONF}", f"--address=unix:path={sock}", "--nofork",
            "--print-address=1"]
    p = tracker.spawn("dbus-daemon", argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    r, _, _ = select.select([p.stdout], [], [], 10)
    line = os.read(p.stdout.fileno(), 4096).decode(errors="replace").strip() if r else ""
    if not line:
        raise BenchError("dbus-daemon did not print its address within 10 s: " + tail_pipe(p.stderr))
    address = line.splitlines()[0]
    if not address.startswith(f"unix:path={sock}"):
        raise BenchError(f"dbus-daemon printed an unexpected address {address!r}")
    return address, p.pid


class LineReader:
    """Non-blocking line reader over a pipe."""

    def __init__(self, f):
        self.fd = f.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""
        self.eof = False

    def read(self):
        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return []
        if not data:
            self.eof = True
            lines, self.buf = ([self.buf] if self.buf else []), b""
            return lines
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        return lines


def wait_lines(names, want, timeout):
    """names: {LineReader: name}. Read until want(reader, line) has returned True for each
    reader; fail clearly on timeout or when one of them ends first."""
    pending = set(names)
    deadline = time.monotonic() + timeout
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            raise BenchError(f"timed out after {timeout:g} s waiting for "
                             + " and ".join(sorted(names[x] for x in pending)) + " to be ready")
        r, _, _ = select.select([x.fd for x in pending], [], [], left)
        for rd in [x for x in pending if x.fd in r]:
            for line in rd.read():
                if want(rd, line):
                    pending.discard(rd)
                    break
            if rd.eof and rd in pending:
                raise BenchError(f"{names[rd]} exited before it was ready")


def big_pipe(fd, size=1 << 20):
    """A 1 MiB pipe lets a harness read in batches every few ms without ever blocking the writer."""
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)


class Monitor:
    """dbus-monitor --profile: counts signal lines, takes first/Nth timestamps from its own column.
    keep_times: remember every signal's serial -> (its own timestamp, when this harness read it)."""

    name = "dbus-monitor"

    def __init__(self, tracker, address, tmp, rules, n, keep_times=False):
        self.argv = ["dbus-monitor", "--address", address, "--profile"] + rules
        self.errpath = os.path.join(tmp, "dbus-monitor.stderr")
        with open(self.errpath, "wb") as err:
            self.p = tracker.spawn(self.name, self.argv, stdout=subprocess.PIPE, stderr=err)
        self.tracker = tracker
        self.reader = LineReader(self.p.stdout)
        big_pipe(self.reader.fd)
        self.n = n
        self.keep_times = keep_times
        self.count = 0
        self.first_ts = self.last_ts = None
        self.arrivals = {}       # serial -> own timestamp (s); keep_times only
        self.read_at = {}        # serial -> time.time_ns() when this harness read the line
        self.cpu0 = self.cpu1 = None
        self.done = False
        self.finished_at = None  # harness monotonic time at the Nth signal

    def is_ready_line(self, line):
        # --profile prints two '#' header lines at once, before anything is set up. dbus-monitor makes
        # its blocking BecomeMonitor (or, on old buses, eavesdropping AddMatch) calls before its main
        # loop dispatches anything, so the first dispatched message, the NameAcquired for its own
        # unique name (followed by NameLost when it becomes a monitor), means the rules are in place.
        return line.startswith(b"sig\t") and (line.endswith(b"\tNameAcquired") or line.endswith(b"\tNameLost"))

    def wait_ready(self, timeout):
        try:
            wait_lines({self.reader: self.name}, lambda rd, line: self.is_ready_line(line), timeout)
        except BenchError as e:
            raise BenchError(f"{e}: {self.stderr_tail()}")

    def feed(self):
        """Read what is available; returns True once N signals were seen."""
        try:
            data = os.read(self.reader.fd, 1 << 20)
        except BlockingIOError:
            return False
        now_ns = time.time_ns()
        if not data:
            self.reader.eof = True
            data = b"\n"
        buf = self.reader.buf + data
        cut = buf.rfind(b"\n") + 1
        chunk, self.reader.buf = buf[:cut], buf[cut:]
        k = chunk.count(SIGNAL_MARK)
        if k == 0:
            return False
        if self.keep_times:
            for line in chunk.split(b"\n"):
                if SIGNAL_MARK in line:
                    f = line.split(b"\t")
                    self.arrivals[int(f[2])] = float(f[1])
                    self.read_at[int(f[2])] = now_ns
        if self.first_ts is None:
            self.first_ts = self._ts_of_nth(chunk, 1)
        if self.count + k >= self.n and not self.done:
            self.last_ts = self._ts_of_nth(chunk, self.n - self.count)
            self.count += k
            self.cpu1 = cpu_seconds(self.p.pid)
            self.finished_at = time.monotonic()
            self.done = True
            return True
        self.count += k
        return False

    @staticmethod
    def _ts_of_nth(chunk, nth):
        pos = -1
        for _ in range(nth):
            pos = chunk.find(SIGNAL_MARK, pos + 1)
        start = chunk.rfind(b"\n", 0, pos) + 1
        return float(chunk[start:pos].split(b"\t")[1])

    def received(self):
        return self.count

    def seconds(self):
        if self.first_ts is None or self.last_ts is None:
            return None
        return self.last_ts - self.first_ts

    def stop(self):
        self.tracker.stop(self.p)

    def stderr_tail(self):
        return tail(self.errpath)


def tail(path, n=10):
    try:
        with open(path, "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-n:])


def tail_pipe(f):
    try:
        os.set_blocking(f.fileno(), False)
        data = f.read() or b""
    except (OSError, ValueError, TypeError):
        data = b""
    return data.decode(errors="replace").strip()[-500:]


def parse_emitter(line):
    """The emitter's "sent N in S s (R/s)"."""
    try:
        parts = line.split()
        return {"sent": int(parts[1]), "seconds": float(parts[3]),
                "signals_per_s": round(int(parts[1]) / float(parts[3]))}
    except (AttributeError, IndexError, ValueError, ZeroDivisionError):
        return {"line": line}


def read_times(times_file):
    """The emitter's --times file: [(serial, send_ns, path, member, new_state)]; the old two-column
    form ("serial ns") gives path/member None."""
    out = []
    with open(times_file) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5:
                out.append((int(p[0]), int(p[1]), p[2], p[3], int(p[4])))
            elif len(p) >= 2:
                out.append((int(p[0]), int(p[1]), None, None, None))
    return out


def percentiles(values):
    """{"samples", "p50", "p99", "max"} of a list (nearest-rank), or None when empty."""
    if not values:
        return None
    v = sorted(values)
    return {"samples": len(v), "p50": round(v[len(v) // 2], 1),
            "p99": round(v[min(len(v) - 1, int(len(v) * 0.99))], 1), "max": round(v[-1], 1)}


def median(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


# ---------------------------------------------------------------- a minimal D-Bus client

class MiniBus:
    """Just enough of the D-Bus wire protocol to make blocking method calls with string arguments
    and read basic replies: no GLib, no python3-dbus. A round trip costs about what the peer
    takes to answer, so it suits tight polling (e.g. logind's ListInhibitors)."""

    def __init__(self, address, timeout=5):
        if not address.startswith("unix:path="):
            raise BenchError(f"MiniBus only knows unix:path= addresses, not {address}")
        path = address[len("unix:path="):].split(",")[0]
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.sock.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
        reply = b""
        while b"\r\n" not in reply:
            chunk = self.sock.recv(256)
            if not chunk:
                raise BenchError("the bus closed the connection during authentication")
            reply += chunk
        if not reply.startswith(b"OK "):
            raise BenchError(f"bus authentication failed: {reply!r}")
        self.sock.sendall(b"BEGIN\r\n")
        self.serial = 0
        self.buf = b""
        self.unique_name = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                     "Hello")[0]

    def close(self):
        with contextlib.suppress(OSError):
            self.sock.close()

    @staticmethod
    def _pad(buf, n):
        return buf + b"\0" * (-len(buf) % n)

    def call(self, dest, path, iface, member, *args, timeout=5):
        """Calls with string arguments; returns the reply's values. An error reply raises BenchError."""
        serial = self.send_call(dest, path, iface, member, *args)
        return self.wait_reply(serial, member, time.monotonic() + timeout)

    def fileno(self):
        return self.sock.fileno()

    def buffered(self):
        """Whether part of a message was already read off the socket (select() would not say so)."""
        return bool(self.buf)

    def send_call(self, dest, path, iface, member, *args):
        """Sends a method call with string arguments; returns its serial for wait_reply(). A caller
        can then select() on fileno() beside its other pipes while the answer is on its way."""
        self.serial += 1
        body = b""
        for a in args:
            body = self._pad(body, 4)
            s = a.encode()
            body += struct.pack("<I", len(s)) + s + b"\0"
        fields = b""

        def field(code, sig, value):
            nonlocal fields
            fields = self._pad(fields, 8)
            v = value.encode()
            fields += struct.pack("<B", code) + struct.pack("<B", len(sig)) + sig.encode() + b"\0"
            if sig == "g":
                fields += struct.pack("<B", len(v)) + v + b"\0"
            else:
                fields = self._pad(fields, 4)
                fields += struct.pack("<I", len(v)) + v + b"\0"
        field(1, "o", path)
        if iface:
            field(2, "s", iface)
        field(3, "s", member)
        field(6, "s", dest)
        if args:
            field(8, "g", "s" * len(args))
        header = b"l" + struct.pack("<BBBII", 1, 0, 1, len(body), self.serial) + struct.pack("<I", len(fields))
        msg = self._pad(header + fields, 8) + body
        self.sock.sendall(msg)
        return self.serial

    def wait_reply(self, serial, member, deadline):
        """The values of the reply to `serial` (from send_call); an error reply raises BenchError."""
        while True:
            mtype, reply_serial, sig, rbody, err = self._read_message(deadline)
            if reply_serial != serial:
                continue   # a signal (NameAcquired) or something else: not ours
            values = _unmarshal(sig, rbody)
            if mtype == 3:
                raise BenchError(f"{member} failed: {err}: {values[0] if values else ''}")
            return values

    def _recv_exact(self, n, deadline):
        while len(self.buf) < n:
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise BenchError("no reply from the bus in time")
            if not chunk:
                raise BenchError("the bus closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _read_message(self, deadline):
        head = self._recv_exact(16, deadline)
        if head[:1] != b"l":
            raise BenchError("big-endian messages are not supported")
        mtype = head[1]
        body_len, _serial, fields_len = struct.unpack("<III", head[4:16])
        rest = self._recv_exact(fields_len + (-(16 + fields_len) % 8) + body_len, deadline)
        fields = _unmarshal("a(yv)", head[12:16] + rest[:fields_len], base=12)[0]
        body = rest[len(rest) - body_len:] if body_len else b""
        info = dict(fields)
        return mtype, info.get(5), info.get(8, ""), body, info.get(4)


def _unmarshal(sig, data, base=0):
    """Values of the complete types in `sig` from `data` (little-endian); `base` is the offset of
    data[0] in the message (alignment is relative to the message start). Basic types, arrays,
    structs, dict entries and variants."""
    pos = [0]

    def align(n):
        pos[0] += -(pos[0] + base) % n

    def one(s, i):
        c = s[i]
        if c in "ybnqiuxtdh":
            fmt_, size = {"y": ("B", 1), "b": ("I", 4), "n": ("h", 2), "q": ("H", 2), "i": ("i", 4),
                          "u": ("I", 4), "x": ("q", 8), "t": ("Q", 8), "d": ("d", 8), "h": ("I", 4)}[c]
            align(size)
            v = struct.unpack_from("<" + fmt_, data, pos[0])[0]
            pos[0] += size
            return (bool(v) if c == "b" else v), i + 1
        if c in "sog":
            if c == "g":
                n = data[pos[0]]
                pos[0] += 1
            else:
                align(4)
                n = struct.unpack_from("<I", data, pos[0])[0]
                pos[0] += 4
            v = data[pos[0]:pos[0] + n].decode(errors="replace")
            pos[0] += n + 1
            return v, i + 1
        if c == "v":
            inner, _ = one("g", 0)
            v, _ = one(inner, 0)
            return v, i + 1
        if c == "a":
            align(4)
            n = struct.unpack_from("<I", data, pos[0])[0]
            pos[0] += 4
            elem_end = _type_end(s, i + 1)
            elem = s[i + 1:elem_end]
            align(8 if elem[0] in "({xtd" else {"y": 1, "n": 2, "q": 2}.get(elem[0], 4))
            end = pos[0] + n
            items = []
            while pos[0] < end:
                v, _ = one(elem, 0)
                items.append(v)
            return items, elem_end
        if c in "({":
            align(8)
            close = _type_end(s, i)
            j = i + 1
            vals = []
            while j < close - 1:
                v, j = one(s, j)
                vals.append(v)
            return tuple(vals), close
        raise BenchError(f"cannot unmarshal type {c!r}")

    out = []
    i = 0
    while i < len(sig):
        v, i = one(sig, i)
        out.append(v)
    return out


def _type_end(s, i):
    """Index just past the single complete type starting at s[i]."""
    c = s[i]
    if c == "a":
        return _type_end(s, i + 1)
    if c in "({":
        depth = 0
        for j in range(i, len(s)):
            depth += s[j] in "({"
            depth -= s[j] in ")}"
            if depth == 0:
                return j + 1
        raise BenchError(f"unbalanced signature {s!r}")
    return i + 1
