import Glibc

/// Writes whole lines to a file descriptor, never through stdio's buffering, so `telwatch | grep`
/// and `| jq` see every event as it happens. Lines go out one `write` each, or, while `holdsLines`,
/// together at `flush()`: the daemon flushes before its loop waits, so the lines of one turn take
/// one `write` and all are out before it sleeps.
final class LineWriter {
    private let fd: Int32
    /// Set once the reader went away (EPIPE); the daemon then stops cleanly.
    private(set) var isBroken = false
    var holdsLines = false
    private var held: [UInt8] = []
    /// A storm's turn must not grow memory: past this, held lines go out at once.
    private static let heldLimit = 64 << 10

    init(fd: Int32) { self.fd = fd }

    func write(_ text: String) {
        var line = text
        line.append("\n")
        line.withUTF8 { write(line: $0) }
    }

    /// A line given as bytes, without its newline.
    func write(line bytes: [UInt8]) {
        guard holdsLines else {
            var line = bytes
            line.append(UInt8(ascii: "\n"))
            return line.withUnsafeBufferPointer { write(buffer: $0) }
        }
        held.append(contentsOf: bytes)
        held.append(UInt8(ascii: "\n"))
        if held.count >= LineWriter.heldLimit { flush() }
    }

    /// A line given as its bytes but for its last one (a JSON object's without its closing
    /// brace, `JSONObject.bytes`): written with `last` and the newline, without a copy of the line.
    func write(line bytes: [UInt8], last: UInt8) {
        guard holdsLines else {
            var line = bytes
            line.append(last)
            return write(line: line)
        }
        held.append(contentsOf: bytes)
        held.append(last)
        held.append(UInt8(ascii: "\n"))
        if held.count >= LineWriter.heldLimit { flush() }
    }

    private func write(line buffer: UnsafeBufferPointer<UInt8>) {
        guard holdsLines else { return write(buffer: buffer) }
        held.append(contentsOf: buffer)
        if held.count >= LineWriter.heldLimit { flush() }
    }

    /// Writes every held line, in one `write` when the reader keeps up.
    func flush() {
        guard !held.isEmpty else { return }
        held.withUnsafeBufferPointer { write(buffer: $0) }
        held.removeAll(keepingCapacity: held.capacity <= 2 * LineWriter.heldLimit)
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
/// title, or forge a second line. On the journal the line carries `priority` instead of the name
/// (`JournalStream`).
func warn(_ message: String, priority: JournalPriority = .warning) {
    var text = TerminalText.escape(message)
    if text.utf8.count > warningLimit {
        text = String(decoding: text.utf8.prefix(warningLimit), as: UTF8.self) + "… (cut)"
    }
    var line = (JournalStream.isStderr ? JournalStream.line(text, priority: priority) : "telwatch: " + text) + "\n"
    line.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
}

/// Long enough for every message of telwatch's own, with room for a quoted reason.
let warningLimit = 1024
