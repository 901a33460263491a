import CallMonitor
import DBus
import Foundation
import Glibc
import TestSupport
import XCTest

final class OtherCommandTests: CommandTestCase {
    func testStatusListsALiveCallAndTheRun() throws {
        try startModemManager(parameters: Self.liveCalls([(.active, .incoming, number: "+15557777")]))
        let watch = try startWatch()
        XCTAssertNotNil(nextEvent(watch, "lock-taken"), "the call live at start holds a run")

        let text = try runToEnd(["status", "--bus", fixture.address, "--backend", "modemmanager",
                                 "--state-dir", stateDirectory])
        XCTAssertEqual(text.status, .exited(0), text.errors)
        XCTAssertTrue(text.output.contains("modemmanager: 1 voice modem"), text.output)
        XCTAssertTrue(text.output.contains("connected (active)"), text.output)
        XCTAssertTrue(text.output.contains("+15557777"), text.output)
        XCTAssertTrue(text.output.contains("run: held for"), text.output)

        let json = try runToEnd(["status", "--json", "--bus", fixture.address, "--backend", "modemmanager",
                                 "--state-dir", stateDirectory])
        let object = try XCTUnwrap(JSONLine.object(json.output.trimmingCharacters(in: .whitespacesAndNewlines)), json.output)
        let calls = try XCTUnwrap(object["calls"] as? [[String: Any]])
        XCTAssertEqual(calls.count, 1)
        XCTAssertEqual(calls.first?["number"] as? String, "+15557777")
        XCTAssertEqual(calls.first?["initial"] as? Bool, true)
        let run = try XCTUnwrap(object["run"] as? [String: Any])
        XCTAssertEqual(run["pid"] as? Int, Int(watch.pid))
        XCTAssertNotNil(run["lease_left"] as? Double)
    }

    func testDoctorOnAnEmptyBusReportsProblemsWithFixes() throws {
        logind.killLogind()
        let result = try runToEnd(["doctor", "--bus", fixture.address, "--state-dir", stateDirectory])
        XCTAssertEqual(result.status, .exited(4), result.output + result.errors)
        XCTAssertTrue(result.output.contains("✔ "), result.output)
        XCTAssertTrue(result.output.contains("✘ no telephony stack is running"), result.output)
        XCTAssertTrue(result.output.contains("✘ systemd-logind is not on this bus"), result.output)
        XCTAssertTrue(result.output.contains("fix: "), result.output)
    }

    /// The exit statuses say 3 for a bus that cannot be reached, for every command: doctor too,
    /// and its help says so.
    func testDoctorWithNoBusExitsThreeAsItsHelpSays() throws {
        let result = try runToEnd(["doctor", "--bus", "unix:path=" + logind.directory + "/no-bus", "--state-dir", stateDirectory])
        XCTAssertEqual(result.status, .exited(3), result.output + result.errors)
        XCTAssertTrue(result.output.contains("✘ "), result.output)
        let help = try runToEnd(["doctor", "--help"])
        XCTAssertTrue(help.output.replacingOccurrences(of: "\n", with: " ")
            .contains("Exit status 4 if anything is ✘; 3 if the bus cannot be reached"), help.output)
    }

    /// A watch with no modem stack to follow says what to try instead, in one line.
    func testWatchWithNoStackHintsAtTheDemoAndBus() throws {
        let noBus = try runToEnd(["--bus", "unix:path=" + logind.directory + "/no-bus", "--state-dir", stateDirectory])
        XCTAssertEqual(noBus.status, .exited(3), noBus.errors)
        XCTAssertTrue(noBus.errors.contains("telwatch: to see telwatch work without a modem: telwatch demo; "
                                            + "to follow another bus: --bus session or --bus ADDRESS\n"), noBus.errors)

        let watch = try telwatch(["--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory])
        XCTAssertTrue(Files.waitUntil(watch.logPath ?? "", timeout: 15) { watch.log().contains("telwatch demo") }, watch.log())
        XCTAssertTrue(watch.log().contains("no telephony stack runs on the unix:path="), watch.log())
        watch.terminate()
    }

    func testDoctorWithModemManagerAndLogindPasses() throws {
        try startModemManager(parameters: #"{"modems": 2}"#)
        let result = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory])
        XCTAssertEqual(result.status, .exited(0), result.output)
        XCTAssertTrue(result.output.contains("2 modems, 2 with voice"), result.output)
        XCTAssertTrue(result.output.contains("✔ an inhibitor lock can be taken (sleep, block)"), result.output)
    }

    func testDemoFinishesOnItsOwnWithTheStory() throws {
        let result = try runToEnd(["demo", "--speed", "20"], timeout: 60)
        XCTAssertEqual(result.status, .exited(0), result.errors)
        let lines = result.output.split(separator: "\n").map(String.init)
        // The second column is the event.
        func count(_ event: String) -> Int { lines.filter { $0.split(separator: " ").dropFirst().first == Substring(event) }.count }
        XCTAssertEqual(count("incoming"), 3, result.output)
        XCTAssertEqual(count("missed"), 1, result.output)
        XCTAssertEqual(count("dialing"), 2, result.output)
        XCTAssertEqual(count("disconnected"), 4, result.output)
        XCTAssertEqual(count("run-started"), count("run-stopped"), result.output)
        XCTAssertTrue(lines.last?.contains("done") == true, result.output)
    }

    /// The built-in simulator and the dbusmock template play the same story; telwatch must see
    /// the same transitions from both.
    func testSimulatorScriptGivesTheSameTransitionsAsTheDbusmockFake() throws {
        let script = logind.directory + "/story.txt"
        try "ring +15550101\nanswer c1\nwaiting +15550202\nhold c1\nanswer c2\nremote-hangup c2\nresume c1\nhangup c1\n"
            .write(toFile: script, atomically: true, encoding: .utf8)

        var fromSimulator: [String] = []
        do {
            let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager",
                                      "--state-dir", stateDirectory])
            XCTAssertNotNil(nextEvent(watch, "backend", timeout: 15))  // waiting for ModemManager
            // Not --exit: telwatch reads each new call's properties from the simulator after CallAdded.
            let simulator = try telwatch(["simulate", "--bus", fixture.address, script])
            fromSimulator = transitions(watch, count: 8)
            simulator.terminate()
            watch.terminate()
        }

        var fromMock: [String] = []
        do {
            try startModemManager()
            let watch = try startWatch(["--state-dir", stateDirectory + "-mock"])
            let call = "org.freedesktop.ModemManager1.Call"
            let first = try ring("+15550101")
            try mm(first, call, "Accept")
            let second = try control("Wait", [.objectPath(try ObjectPath(Self.modem0)), .string("+15550202")])
                .first?.objectPath?.rawValue ?? ""
            try setState(first, .held, reason: .unknown)
            try setState(second, .active, reason: .accepted)
            try control("RemoteHangup", [.objectPath(try ObjectPath(second))])
            try setState(first, .active, reason: .unknown)
            try mm(first, call, "Hangup")
            fromMock = transitions(watch, count: 8)
        }
        XCTAssertEqual(fromSimulator.count, 8)
        // Per call, in order. Across calls the order may differ: a new call is known only once its
        // properties have been read, while a known call's change is applied at once.
        func perCall(_ lines: [String]) -> [String: [String]] { Dictionary(grouping: lines) { $0.split(separator: " ")[4].description } }
        XCTAssertEqual(perCall(fromSimulator), perCall(fromMock))
    }

    /// The simulator takes the method telwatch answers a waiting call with (ModemManager's
    /// `Voice.HoldAndAccept`): the connected call goes on hold, the waiting one is connected.
    func testSimulatorHoldsTheConnectedCallToAnswerAWaitingOne() throws {
        let script = logind.directory + "/waiting.txt"
        try "ring +15550101\nanswer c1\nwaiting +15550202\n".write(toFile: script, atomically: true, encoding: .utf8)
        let watch = try telwatch(["--bus", fixture.address, "--json", "--backend", "modemmanager",
                                  "--state-dir", stateDirectory])
        defer { watch.terminate() }
        XCTAssertNotNil(nextEvent(watch, "backend", timeout: 15))  // waiting for ModemManager
        let simulator = try telwatch(["simulate", "--bus", fixture.address, script])
        defer { simulator.terminate() }
        XCTAssertEqual(transitions(watch, count: 3).last, "incoming incoming waiting incoming +15550202 0")

        _ = try mm(Self.modem0, "org.freedesktop.ModemManager1.Modem.Voice", "HoldAndAccept")
        XCTAssertEqual(transitions(watch, count: 2), ["connected connected held incoming +15550101 0",
                                                      "connected connected active incoming +15550202 0"])
    }

    /// A script's numbers and echo text are text from outside: escaped on the terminal, as a
    /// caller id is everywhere (here one that would set the window title and ring the bell).
    func testSimulateEchoesAScriptsNumbersEscaped() throws {
        let script = logind.directory + "/hostile.txt"
        try "ring +1555\u{1B}]0;owned\u{7}\nclip c1 +1\u{9B}2J\necho \u{202E}hi\u{2028}x\nmissed c1\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        let result = try runToEnd(["simulate", "--bus", fixture.address, "--exit", script])
        // Commands typed on stdin: a bad one is said on stdout, quoting the word.
        let typed = try fixture.start(["/bin/sh", "-c", "printf 'ring +1 on \\033]0;x\\007\\n' | \"$0\" simulate --bus \"$1\" --exit",
                                       Self.telwatch, fixture.address], name: "simulate")
        let typedOutput = typed.readToEnd(timeout: 20)
        XCTAssertNotNil(typed.wait(timeout: 5))
        let all = result.output + typedOutput
        let raw = all.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || [0x202E, 0x2028].contains($0.value)
        }
        XCTAssertTrue(raw.isEmpty, all.debugDescription)
        XCTAssertTrue(result.output.contains(#"ringing +1555\e]0;owned\u{7}"#), result.output)
        XCTAssertTrue(result.output.contains(#"caller id +1\u{9b}2J"#), result.output)
        XCTAssertTrue(result.output.contains(#"simulator: \u{202e}hi\u{2028}x"#), result.output)
        XCTAssertTrue(typedOutput.contains(#"simulator: error: line 1: '\e]0;x\u{7}' is not a modem number"#), typedOutput)
    }

    /// `event state detail direction number missed` of the next `count` call events.
    private func transitions(_ process: TestProcess, count: Int) -> [String] {
        var out: [String] = []
        let calls: Set<String> = ["incoming", "dialing", "connected", "disconnected", "missed", "updated"]
        while out.count < count, let line = process.readLine(timeout: 10) {
            guard let object = JSONLine.object(line), let event = object["event"] as? String, calls.contains(event) else { continue }
            out.append([event, object["state"], object["detail"], object["direction"], object["number"], object["missed"]]
                .map { "\($0 ?? "-")" }.joined(separator: " "))
        }
        return out
    }
}
