import CallMonitor
import DBus
import Loop

/// Plays simulator commands one after another on the event loop; `sleep` arms a timer instead
/// of blocking, so the bus keeps being served while the script waits.
public final class ScriptPlayer {
    private let simulator: SimulatedModemManager
    private let loop: EventLoop
    private let report: (String) -> Void
    private var queue: [(line: Int, command: SimulatorCommand)] = []
    private var created: [SimulatedModemManager.Call] = []
    private var pause: TimerSource?
    private var paused = false
    /// Runs once, when the queue is empty and no pause is pending.
    public var onIdle: (() -> Void)?
    /// `echo` lines go here when set (the demo's narration), else to `report`.
    public var onNarration: ((String) -> Void)?
    /// Multiplies every `sleep` (the demo's --speed divides it).
    public var timeScale = 1.0
    public private(set) var failure: String?

    public init(simulator: SimulatedModemManager, loop: EventLoop, report: @escaping (String) -> Void) {
        self.simulator = simulator
        self.loop = loop
        self.report = report
    }

    public var isIdle: Bool { queue.isEmpty && !paused }

    public func enqueue(_ commands: [(line: Int, command: SimulatorCommand)]) {
        queue += commands
        loop.soon { [weak self] in self?.advance() }
    }

    private func advance() {
        while !paused, !queue.isEmpty {
            let (line, command) = queue.removeFirst()
            do {
                try perform(command)
            } catch {
                failure = "line \(line): \(error)"
                report("error: line \(line): \(error)")
                queue.removeAll()
            }
        }
        if isIdle { onIdle?() }
    }

    private func perform(_ command: SimulatorCommand) throws {
        typealias MM = SimulatedModemManager
        switch command {
        case .addModem(let model):
            let path = try simulator.addModem(model: model)
            report("modem \(simulator.modems.count - 1) added: \(path)")
        case .ring(let number, let modem):
            let call = try simulator.addCall(on: try modemPath(modem), state: .ringingIn, reason: .incomingNew,
                                             direction: .incoming, number: number)
            remember(call, "ringing", number)
        case .waiting(let number, let modem):
            let call = try simulator.addCall(on: try modemPath(modem), state: .waiting, reason: .incomingNew,
                                             direction: .incoming, number: number)
            remember(call, "waiting", number)
        case .dial(let number, let modem):
            // What a dialer does: CreateCall, then Start.
            let call = try simulator.addCall(on: try modemPath(modem), state: .unknown, reason: .unknown,
                                             direction: .outgoing, number: number)
            try simulator.setState(call, .dialing, reason: .outgoingStarted)
            remember(call, "dialing", number)
        case .clip(let reference, let number):
            let call = try resolve(reference)
            try simulator.setNumber(call, number)
            step(call, "caller id \(number)")
        case .alerting(let reference): try transition(reference, .ringingOut, .outgoingStarted, "alerting")
        case .answer(let reference): try transition(reference, .active, .accepted, "answered")
        case .hold(let reference): try transition(reference, .held, .unknown, "held")
        case .resume(let reference): try transition(reference, .active, .unknown, "resumed")
        case .hangup(let reference): try transition(reference, .terminated, .terminated, "hung up")
        case .remoteHangup(let reference): try transition(reference, .terminated, .terminated, "hung up by the far end")
        case .busy(let reference): try transition(reference, .terminated, .refusedOrBusy, "busy")
        case .missed(let reference): try transition(reference, .terminated, .terminated, "caller gave up")
        case .delete(let reference):
            let call = try resolve(reference)
            try simulator.delete(call)
            step(call, "deleted")
        case .tones(let reference, let dtmf):
            let call = try resolve(reference)
            try simulator.hearTones(call, dtmf)
            step(call, "pressed \(dtmf.count) key\(dtmf.count == 1 ? "" : "s")")
        case .sleep(let seconds):
            paused = true
            if pause == nil {
                pause = try loop.timer { [weak self] in
                    self?.paused = false
                    self?.advance()
                }
            }
            pause?.schedule(after: seconds * timeScale)
        case .echo(let text):
            if let onNarration { onNarration(text) } else { report(text) }
        }
    }

    private func transition(_ reference: SimulatorCommand.CallReference, _ state: ModemManagerCallState,
                            _ reason: ModemManagerCallStateReason, _ what: String) throws {
        let call = try resolve(reference)
        guard call.state != .terminated else { throw Failure("c\(index(of: call)) has already ended") }
        try simulator.setState(call, state, reason: reason)
        step(call, what)
    }

    private func remember(_ call: SimulatedModemManager.Call, _ what: String, _ number: String) {
        created.append(call)
        step(call, "\(what)\(number.isEmpty ? " (no caller id yet)" : " " + number)")
    }

    private func step(_ call: SimulatedModemManager.Call, _ what: String) {
        report("c\(index(of: call)) \(call.path): \(what)")
    }

    private func index(of call: SimulatedModemManager.Call) -> Int {
        (created.firstIndex { $0 === call } ?? -1) + 1
    }

    private func resolve(_ reference: SimulatorCommand.CallReference) throws -> SimulatedModemManager.Call {
        switch reference {
        case .last:
            guard let call = created.last else { throw Failure("no call yet") }
            return call
        case .numbered(let number):
            guard number <= created.count else { throw Failure("no call c\(number) yet") }
            let call = created[number - 1]
            guard simulator.calls.contains(where: { $0 === call }) else { throw Failure("c\(number) was deleted") }
            return call
        }
    }

    private func modemPath(_ index: Int) throws -> ObjectPath {
        guard index < simulator.modems.count else { throw Failure("no modem \(index)") }
        return simulator.modems[index]
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
