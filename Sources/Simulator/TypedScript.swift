import Glibc
import Loop

/// Commands typed (or piped) on a descriptor, played as their lines arrive: each line is read as
/// a script line, a bad one is said and skipped, and the end of the input ends the script.
public final class TypedScript {
    private let player: ScriptPlayer
    private let report: (String) -> Void
    private var pending: [UInt8] = []
    private var lineNumber = 0
    private var chunk = [UInt8](repeating: 0, count: 4096)
    private var source: IOSource?
    /// A line that did not parse was seen.
    public private(set) var hadBadLines = false
    /// The input ended: every line went to the player.
    public private(set) var isDone = false

    /// `report` gets what is wrong with a line, as the parser says it.
    public init(player: ScriptPlayer, report: @escaping (String) -> Void) {
        self.player = player
        self.report = report
    }

    /// Reads `fd` through the loop; a file that cannot be polled (a regular file, /dev/null) is
    /// all there already, and is read at once.
    public func read(fd: Int32, loop: EventLoop) {
        do {
            source = try loop.watch(fd: fd, events: .readable) { [weak self] _ in
                guard let self else { return }
                let count = self.readChunk(fd)
                if count <= 0 { self.cancel() }
            }
        } catch {
            while readChunk(fd) > 0 {}
        }
    }

    public func cancel() {
        source?.cancel()
        source = nil
    }

    private func readChunk(_ fd: Int32) -> Int {
        let count = Glibc.read(fd, &chunk, chunk.count)
        take(chunk[..<max(count, 0)], atEnd: count <= 0)
        return count
    }

    private func take(_ bytes: ArraySlice<UInt8>, atEnd: Bool) {
        pending += bytes
        if atEnd && !pending.isEmpty && pending.last != UInt8(ascii: "\n") { pending.append(UInt8(ascii: "\n")) }
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lineNumber += 1
            let line = String(decoding: pending[..<newline], as: UTF8.self)
            pending.removeSubrange(...newline)
            do {
                if let command = try SimulatorCommand.parse(line: line, number: lineNumber) {
                    player.enqueue([(lineNumber, command)])
                }
            } catch {
                hadBadLines = true
                report("\(error)")
            }
        }
        if atEnd {
            isDone = true
            player.enqueue([])
        }
    }
}
