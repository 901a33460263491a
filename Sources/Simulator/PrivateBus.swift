import DBus
import Glibc
import Loop

/// A throwaway `dbus-daemon` for the demo: system-bus semantics and a permissive policy, its
/// socket in a fresh directory under $TMPDIR. It is stopped (by PID) and removed on `stop()`.
public final class PrivateBus {
    public let directory: String
    public let address: String
    private let pid: pid_t
    private var stopped = false

    private static let config = """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>system</type>
      <listen>unix:tmpdir=/tmp</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow user="*"/>
        <allow own="*"/>
        <allow send_type="*"/>
        <allow receive_type="*"/>
      </policy>
    </busconfig>

    """

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/telwatch-demo-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw StartError(description: "cannot create a directory in \(base): \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        let configPath = directory + "/bus.conf"
        guard let file = fopen(configPath, "w") else { throw StartError(description: "cannot write \(configPath)") }
        fputs(PrivateBus.config, file)
        fclose(file)

        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw StartError(description: "pipe failed") }
        defer { close(fds[0]) }
        // Its chatter (e.g. about fd limits it may not raise) goes to a log, shown only on failure.
        let logPath = directory + "/dbus-daemon.log"
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        do {
            // The kernel stops the bus if the demo itself dies.
            pid = try Subprocess.spawn(
                ["dbus-daemon", "--nofork", "--print-address=1", "--config-file=" + configPath,
                 "--address=unix:path=" + directory + "/bus"],
                stdout: .fd(fds[1]), stderr: log >= 0 ? .fd(log) : .null, deathSignal: SIGTERM)
        } catch {
            close(fds[1])
            if log >= 0 { close(log) }
            throw StartError(description: "cannot start dbus-daemon (is the dbus-daemon package installed?): \(error)")
        }
        close(fds[1])
        if log >= 0 { close(log) }
        // The daemon prints its address once it listens; bounded so a broken daemon cannot hang us.
        var line: [UInt8] = []
        var poller = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        let deadline = monotonicNow() + 10
        while !line.contains(UInt8(ascii: "\n")), monotonicNow() < deadline {
            guard poll(&poller, 1, 100) >= 0 else { break }
            var chunk = [UInt8](repeating: 0, count: 512)
            let count = read(fds[0], &chunk, chunk.count)
            if count > 0 { line += chunk[..<count] } else if count == 0 { break }
        }
        let text = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        guard text.hasPrefix("unix:") else {
            kill(pid, SIGKILL)
            waitpid(pid, nil, 0)
            let said = (try? SmallFile.text(logPath, limit: 1 << 20)) ?? ""
            throw StartError(description: "dbus-daemon did not start" + (said.isEmpty ? "" : ": " + said))
        }
        address = text
    }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        unlink(directory + "/bus.conf")
        unlink(directory + "/dbus-daemon.log")
        unlink(directory + "/bus")
        rmdir(directory)
    }

    deinit { stop() }
}
