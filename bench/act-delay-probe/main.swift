// The direct way of bench/act-delay: a CallMonitor on the bench's private bus, acting on the real
// stack when told to on stdin, so the bench can time an act with no telwatch service in between.
// One request a line, one answer a line (the bench times the request itself):
//   wait NUMBER STATE            -> "call BACKEND PATH" once a live call with NUMBER is in STATE
//   idle                         -> "idle" once no call is live
//   act answer|hangup BACKEND PATH, act deflect BACKEND PATH NUMBER, act tones BACKEND PATH DIGITS,
//   dial NUMBER                  -> "ok BACKEND PATH" or "failed WHY" once the stack has answered
import CallMonitor
import DBus
import Glibc
import Loop

func writeLine(_ text: String, to fd: Int32 = 1) {
    var line = text + "\n"
    line.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
}

func fail(_ text: String) -> Never {
    writeLine("act-delay-probe: \(text)", to: 2)
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2, let backends = BackendSelection(rawValue: arguments[1]) else {
    fail("usage: act-delay-probe ADDRESS modemmanager|ofono")
}

/// A request waiting for the calls to be as it wants them.
struct Waiter {
    let done: ([CallSnapshot]) -> String?
}

do {
    let loop = try EventLoop()
    let connection = try Connection(.address(arguments[0]), loop: loop)
    var waiters: [Waiter] = []
    var monitor: CallMonitor?
    func settle() {
        guard let calls = monitor?.liveCalls else { return }
        waiters.removeAll { waiter in
            guard let answer = waiter.done(calls) else { return false }
            writeLine(answer)
            return true
        }
    }
    let acting = CallMonitor(connection: connection, backends: backends, onEvent: { _ in loop.soon(settle) },
                             onNotice: { notice in
                                 if case .synced = notice { writeLine("synced") }
                             })
    monitor = acting
    func report(_ report: CallActReport) {
        switch report.outcome {
        case .success(let key): writeLine("ok \(key.backend.rawValue) \(key.path)")
        case .failure(let failure): writeLine("failed \(failure)")
        }
    }
    func handle(_ line: String) {
        let words = line.split(separator: " ").map(String.init)
        switch words.first {
        case "wait" where words.count == 3:
            waiters.append(Waiter { calls in
                calls.first { $0.number == words[1] && $0.state.rawValue == words[2] }
                    .map { "call \($0.key.backend.rawValue) \($0.key.path)" }
            })
            settle()
        case "idle":
            waiters.append(Waiter { $0.isEmpty ? "idle" : nil })
            settle()
        case "act" where words.count >= 4:
            guard let backend = BackendKind(rawValue: words[2]) else { return writeLine("failed no stack \(words[2])") }
            let key = CallKey(backend: backend, path: words[3])
            let act: CallAct
            switch (words[1], words.count) {
            case ("answer", 4): act = .answer
            case ("hangup", 4): act = .hangUp
            case ("deflect", 5): act = .deflect(to: words[4])
            case ("tones", 5): act = .sendTones(words[4])
            default: return writeLine("failed unknown act \(line)")
            }
            acting.act(act, on: key, done: report)
        case "dial" where words.count == 2:
            acting.dial(words[1], done: report)
        default:
            writeLine("failed unknown request \(line)")
        }
    }
    var pending: [UInt8] = []
    let input = try loop.watch(fd: 0, events: .readable) { _ in
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(0, &buffer, buffer.count)
        guard count > 0 else { return loop.stop() }
        pending += buffer[..<count]
        while let newline = pending.firstIndex(of: 0x0A) {
            handle(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
    }
    try acting.start()
    loop.run()
    input.cancel()
    acting.stop()
} catch {
    fail("\(error)")
}
