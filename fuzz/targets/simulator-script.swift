// Fuzz target: the simulator's script language (`telwatch simulate`, `demo`).
// fuzz-sources: Sources/Simulator/SimulatorScript.swift
//
// The parser is the Simulator module's, and its one file is compiled in here (it
// imports nothing). Checked besides "no crash": a script that parses gives one command per
// non-blank line, in order; sleeps are finite and bounded; no number or call carries a separator.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let commands = try? SimulatorCommand.parse(text) else { return 0 }
    let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).count
    var previous = 0
    for (line, command) in commands {
        precondition(line > previous && line <= lines, "command on line \(line) after line \(previous) of \(lines)")
        previous = line
        switch command {
        case .sleep(let seconds):
            precondition(seconds.isFinite && seconds >= 0 && seconds < 86_400, "sleep \(seconds)")
        case .ring(let number, let modem), .waiting(let number, let modem), .dial(let number, let modem):
            precondition(!number.contains(where: { " \t\r\n#".contains($0) }) && modem >= 0, "number '\(number)'")
        case .clip(let call, let number):
            precondition(!number.contains(where: { " \t\r\n#".contains($0) }), "number '\(number)'")
            if case .numbered(let index) = call { precondition(index > 0, "call c\(index)") }
        default:
            break
        }
    }
    return 0
}
