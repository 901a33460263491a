import Glibc

/// Writes whole lines to a file descriptor with one `write` each, so `telwatch | grep` and
/// `| jq` see every event the moment it happens (no stdio buffering to flush).
final class LineWriter {
    private let fd: Int32
    /// Set once the reader went away (EPIPE); the daemon then stops cleanly.
    private(set) var isBroken = false

    init(fd: Int32) { self.fd = fd }

    func write(_ text: String) {
        var line = text
        line.append("\n")
        line.withUTF8 { write(buffer: $0) }
    }

    /// A line given as bytes, without its newline.
    func write(line bytes: [UInt8]) {
        var line = bytes
        line.append(UInt8(ascii: "\n"))
        line.withUnsafeBufferPointer { write(buffer: $0) }
    }

    /// Text written exactly as it is, line ends included.
    func write(raw text: String) {
        var copy = text
        copy.withUTF8 { write(buffer: $0) }
    }

    private func write(buffer: UnsafeBufferPointer<UInt8>) {
        guard !isBroken, let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(fd, base + offset, buffer.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                isBroken = true
                return
            }
        }
    }
}

/// Diagnostics on stderr, prefixed with the program name like every Unix tool. Messages carry text
/// from outside (D-Bus error texts, bus names, paths, hook commands): every one goes through the
/// terminal escaper and is cut to `warningLimit` bytes, so no message can move the cursor, set a
/// title, or forge a second line.
func warn(_ message: String) {
    var text = TerminalText.escape(message)
    if text.utf8.count > warningLimit {
        text = String(decoding: text.utf8.prefix(warningLimit), as: UTF8.self) + "… (cut)"
    }
    var line = "telwatch: " + text + "\n"
    line.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
}

/// Long enough for every message of telwatch's own, with room for a quoted reason.
let warningLimit = 1024
