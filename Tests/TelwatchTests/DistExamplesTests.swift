import Glibc
import Loop
import TestSupport
import XCTest
@testable import telwatch

/// The shipped examples do what their comments say: the config file's commented lines parse
/// once uncommented, and the hooks call the phone's tools (stand-ins here, on PATH) with exactly
/// the arguments they should, a hostile name included.
final class DistExamplesTests: XCTestCase {
    private var scratch: ScratchDirectory!

    override func setUpWithError() throws { scratch = try ScratchDirectory() }
    override func tearDown() { scratch?.remove() }

    func testTheConfigFilesExamplesParseOnceUncommented() throws {
        let shipped = try XCTUnwrap(Files.text(Repository.path("dist/telwatch.conf")))
        let examples = shipped.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            ["#while.", "#hook.", "#contacts", "#hooks"].contains { line.hasPrefix($0) } ? line.dropFirst() : line
        }
        let path = scratch.path + "/telwatch.conf"
        try Files.write(path, examples.joined(separator: "\n"))
        let options = try XCTUnwrap(WatchArguments.parse(["--config", path]))
        XCTAssertEqual(options.whileCommands.first?.scope, .ringing)
        XCTAssertEqual(options.whileCommands.first?.arguments, ["fbcli", "-E", "phone-incoming-call", "-t", "120"])
        XCTAssertEqual(options.hookCommands["missed"], [["/usr/bin/logger", "-t", "telwatch", "missed call"]])
        XCTAssertNotNil(options.contactsFile)
    }

    /// Runs `dist/hooks/NAME` with `variables` and stand-ins for the tools, returning each
    /// stand-in's argv (NUL-separated as it wrote them), by tool name.
    private func run(_ name: String, _ variables: [String: String]) throws -> [String: [String]] {
        let bin = scratch.path + "/bin"
        try Files.makeDirectory(bin)
        for tool in ["notify-send", "callaudiocli"] {
            try Files.script(bin + "/" + tool, "printf '%s\\0' \"$@\" > \"\(scratch.path)/\(tool).args\"")
        }
        var environment = ["PATH=\(bin):/usr/bin:/bin"]
        for (key, value) in variables { environment.append(key + "=" + value) }
        let pid = try Subprocess.spawn([Repository.path("dist/hooks/" + name)], environment: environment,
                                       newProcessGroup: false)
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        XCTAssertEqual(ChildExit(waitStatus: status), .exited(0), name)
        var out: [String: [String]] = [:]
        for tool in ["notify-send", "callaudiocli"] {
            guard let bytes = Files.bytes("\(scratch.path)/\(tool).args") else { continue }
            out[tool] = bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast()
                .map { String(decoding: $0, as: UTF8.self) }
            unlink("\(scratch.path)/\(tool).args")
        }
        return out
    }

    func testTheMissedHookNamesTheContactAndNothingOfItIsCode() throws {
        let hostile = "Eve $(touch \(scratch.path)/pwned) `id` \"; rm -rf ~ #"
        let ran = try run("missed", ["TELWATCH_NUMBER": "+15550001", "TELWATCH_CONTACT": hostile, "TELWATCH_NAME": "stack"])
        XCTAssertEqual(ran["notify-send"], ["--app-name=telwatch", "--icon=call-missed", "--category=call.missed", "--",
                                            "Missed call", "from \(hostile) (+15550001)"])
        XCTAssertFalse(Files.exists(scratch.path + "/pwned"))
        let unnamed = try run("missed", ["TELWATCH_NUMBER": "", "TELWATCH_CONTACT": "", "TELWATCH_NAME": ""])
        XCTAssertEqual(unnamed["notify-send"]?.last, "from unknown number")
    }

    func testCallAudioGoesToCallModeOnAnswerAndBackOnlyWhenTheLastCallEnds() throws {
        XCTAssertEqual(try run("connected", ["TELWATCH_LIVE_CALLS": "1"])["callaudiocli"], ["-m", "1"])
        XCTAssertNil(try run("disconnected", ["TELWATCH_LIVE_CALLS": "1"])["callaudiocli"], "another call is live")
        XCTAssertEqual(try run("disconnected", ["TELWATCH_LIVE_CALLS": "0"])["callaudiocli"], ["-m", "0"])
    }
}
