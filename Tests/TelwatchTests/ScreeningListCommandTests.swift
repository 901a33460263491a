import Foundation
import Glibc
import Loop
import TestSupport
import XCTest

/// `telwatch block` and `telwatch allow` as a user runs them: the rules file `watch` would read
/// edited in place by a rename, hostile numbers refused, and a running telwatch following the
/// edit (docs/screening.md, "From the command line").
final class ScreeningListCommandTests: CommandTestCase {
    private var rulesDirectory: String { logind.directory + "/rules" }
    private var rulesPath: String { rulesDirectory + "/screening.conf" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        XCTAssertEqual(mkdir(rulesDirectory, 0o755), 0)
    }

    private func edit(_ arguments: [String], as prefix: [String] = []) throws
        -> (status: ChildExit?, output: String, errors: String) {
        let process = try fixture.start(prefix + [Self.telwatch] + arguments, name: "edit")
        let output = process.readToEnd(timeout: 20)
        let status = process.wait(timeout: 5)
        return (status, output, process.log())
    }

    private func rules() -> String? { Files.exists(rulesPath) ? Files.text(rulesPath) : nil }

    func testBlockCreatesTheFileTheConfigNamesAndAllowUndoesIt() throws {
        let config = logind.directory + "/telwatch.conf"
        try Files.write(config, "screening = \(rulesPath)\n")
        let blocked = try edit(["block", "--config", config, "+19005550100", "+1800*"])
        XCTAssertEqual(blocked.status, .exited(0), blocked.errors)
        XCTAssertEqual(blocked.output, "blocked +19005550100 in \(rulesPath)\nblocked +1800* in \(rulesPath)\n")
        XCTAssertEqual(rules(), "block +19005550100\nblock +1800*\n")
        var info = stat()
        XCTAssertEqual(stat(rulesPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o666 & ~Self.umaskNow, "a new file: as any new file of this user")

        let again = try edit(["block", "--config", config, "0019005550100"])
        XCTAssertEqual(again.status, .exited(0), again.errors)
        XCTAssertEqual(again.output, "0019005550100 is already blocked in \(rulesPath): nothing written\n")
        XCTAssertEqual(rules(), "block +19005550100\nblock +1800*\n")

        let allowed = try edit(["allow", "--screening", rulesPath, "+1 900 555 0100"])
        XCTAssertEqual(allowed.status, .exited(0), allowed.errors)
        XCTAssertEqual(allowed.output, "allowed +19005550100 in \(rulesPath) (taken out of block on line 1)\n")
        XCTAssertEqual(rules(), "block +1800*\nallow +19005550100\n")
        try Files.write(rulesPath, "allow +1800*\n" + (rules() ?? ""))
        let both = try edit(["block", "--screening", rulesPath, "+1800*"])
        XCTAssertEqual(both.output, "blocked +1800* in \(rulesPath) (already listed; taken out of allow on line 1)\n")
        XCTAssertEqual(rules(), "block +1800*\nallow +19005550100\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: rulesDirectory), ["screening.conf"],
                       "no temporary file left")
    }

    private static var umaskNow: mode_t {
        let mask = umask(0)
        umask(mask)
        return mask
    }

    func testAHostileNumberIsRefusedAndNothingIsWritten() throws {
        try Files.write(rulesPath, "# mine\n")
        // The longest single argument Linux passes (MAX_ARG_STRLEN, 128 KiB with its NUL).
        let huge = String(repeating: "1", count: 128 * 1024 - 1)
        let cases: [(argument: String, says: String)] = [
            ("+1555\u{1B}[2J", "'+1555\\e[2J' is refused: a control character (0x1b)"),
            ("+1555\n+1666", "is refused: a control character (0xa)"),
            (huge, "is refused: a number of 131071 bytes (at most 64)"),
            ("call-me-maybe", "'call-me-maybe' is refused: not a number or a prefix"),
            ("+15#55", "is refused: not a number or a prefix"),
        ]
        for (argument, says) in cases {
            for command in ["block", "allow"] {
                let result = try edit([command, "--screening", rulesPath, "+15550100", argument])
                XCTAssertEqual(result.status, .exited(2), "\(command) \(argument.prefix(20)): \(result.errors)")
                XCTAssertEqual(result.output, "")
                XCTAssertTrue(result.errors.contains("telwatch: \(command): ") && result.errors.contains(says),
                              result.errors.prefix(400) + "")
                XCTAssertFalse(result.errors.contains("\u{1B}"), "escaped on stderr")
                XCTAssertLessThan(result.errors.utf8.count, 1000, "a huge number is cut in the message")
                XCTAssertEqual(rules(), "# mine\n", "nothing written")
            }
        }
        let option = try edit(["block", "--screening", rulesPath, "-5"])
        XCTAssertEqual(option.status, .exited(2))
        XCTAssertTrue(option.errors.contains("block: unknown option '-5'"), option.errors)
        let none = try edit(["allow", "--screening", rulesPath])
        XCTAssertEqual(none.status, .exited(2))
        XCTAssertTrue(none.errors.contains("allow: give at least one NUMBER"), none.errors)
        XCTAssertEqual(rules(), "# mine\n")
    }

    func testWithoutARulesFileItSaysHowToNameOne() throws {
        let config = logind.directory + "/telwatch.conf"
        try Files.write(config, "backend = auto\n")
        let result = try edit(["allow", "--config", config, "+15550100"])
        XCTAssertEqual(result.status, .exited(2), result.errors)
        XCTAssertEqual(result.output, "")
        let lines = result.errors.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, result.errors)
        XCTAssertTrue(lines.first?.contains("allow: no rules file: give --screening FILE, or --config FILE "
                                            + "whose screening = FILE names one") == true, result.errors)
    }

    /// `telwatch block NUMBER` as a user types it: `no rules file` before. A user other than root
    /// (and the service's account) edits its own instance's rules file, the one the user unit
    /// gives its telwatch, made with its directory on the first edit.
    func testAsTypedByAUserItEditsThatUsersOwnRulesFile() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root: the user is started with setpriv --reuid") }
        chmod(logind.directory, 0o711)
        let home = logind.directory + "/home"
        XCTAssertEqual(mkdir(home, 0o755), 0)
        XCTAssertEqual(chown(home, 65534, 65534), 0)
        let user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "env", "-u", "XDG_CONFIG_HOME",
                    "HOME=" + home]
        let own = home + "/.config/telwatch/screening.conf"
        let blocked = try edit(["block", "+15550100"], as: user)
        XCTAssertEqual(blocked.status, .exited(0), blocked.errors)
        XCTAssertEqual(blocked.output, "blocked +15550100 in \(own)\n")
        XCTAssertEqual(Files.text(own), "block +15550100\n")
        let allowed = try edit(["allow", "+15550100"], as: user)
        XCTAssertEqual(allowed.output, "allowed +15550100 in \(own) (taken out of block on line 1)\n", allowed.errors)
        XCTAssertEqual(Files.text(own), "allow +15550100\n")

        let configHome = home + "/xdg"
        let xdg = try edit(["block", "+15550101"], as: Array(user.dropLast(3)) + ["XDG_CONFIG_HOME=" + configHome, "HOME=" + home])
        XCTAssertEqual(xdg.output, "blocked +15550101 in \(configHome)/telwatch/screening.conf\n", xdg.errors)
        // --config names another configuration: its screening, or none.
        let config = home + "/other.conf"
        try Files.write(config, "backend = auto\n")
        let other = try edit(["block", "--config", config, "+15550102"], as: user)
        XCTAssertEqual(other.status, .exited(2), other.errors)
        XCTAssertTrue(other.errors.contains("block: no rules file"), other.errors)
    }

    /// Another user, who may read the file but not write it: one line, exit status 1. Root keeps
    /// the file's owner and mode when it edits it for the service.
    func testAFileThisUserMayNotWriteIsOneLineAndRootKeepsOwnerAndMode() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root: the other user is started with setpriv --reuid") }
        chmod(logind.directory, 0o711)
        try Files.write(rulesPath, "block +1900*\n")
        chmod(rulesPath, 0o644)
        let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        let refused = try edit(["block", "--screening", rulesPath, "+15550100"], as: nobody)
        XCTAssertEqual(refused.status, .exited(1), refused.errors)
        XCTAssertEqual(refused.errors, "telwatch: block: cannot write \(rulesPath): Permission denied; nothing was changed\n")
        XCTAssertEqual(rules(), "block +1900*\n")

        // The file is the other user's, but the directory is not: it may not create the new file.
        XCTAssertEqual(chown(rulesPath, 65534, 65534), 0)
        chmod(rulesPath, 0o604)
        let directory = try edit(["allow", "--screening", rulesPath, "+15550100"], as: nobody)
        XCTAssertEqual(directory.status, .exited(1), directory.errors)
        XCTAssertTrue(directory.errors.contains("cannot write \(rulesPath): Permission denied (this user may not "
                                                + "create files in \(rulesDirectory))"), directory.errors)
        XCTAssertEqual(rules(), "block +1900*\n")

        let root = try edit(["allow", "--screening", rulesPath, "+15550100"])
        XCTAssertEqual(root.status, .exited(0), root.errors)
        XCTAssertEqual(rules(), "block +1900*\nallow +15550100\n")
        var info = stat()
        XCTAssertEqual(stat(rulesPath, &info), 0)
        XCTAssertEqual([info.st_uid, info.st_gid], [65534, 65534])
        XCTAssertEqual(info.st_mode & 0o7777, 0o604)
    }

    /// Edits made at the same time follow each other: none undoes another.
    func testEditsAtTheSameTimeAreAllKept() throws {
        try Files.write(rulesPath, "# many hands\n")
        let numbers = (10..<30).map { "+155501\($0)" }
        let processes = try numbers.map { number in
            try fixture.start([Self.telwatch, "block", "--screening", rulesPath, number], name: "edit")
        }
        for process in processes {
            _ = process.readToEnd(timeout: 20)
            XCTAssertEqual(process.wait(timeout: 5), .exited(0), process.log())
        }
        let lines = rules()?.split(separator: "\n").map(String.init) ?? []
        XCTAssertEqual(lines.first, "# many hands")
        XCTAssertEqual(Set(lines.dropFirst()), Set(numbers.map { "block " + $0 }), rules() ?? "")
        XCTAssertEqual(lines.count, numbers.count + 1)
    }

    /// A rules file that does not parse screens nothing; an edit neither mends it nor hides it:
    /// nothing is written, and the command says why screening is off.
    func testAFileThatDoesNotParseIsNotEditedAndSaysScreeningIsOff() throws {
        try Files.write(rulesPath, "block +1900*\nring-twice\n")
        let result = try edit(["block", "--screening", rulesPath, "+15550100"])
        XCTAssertEqual(result.status, .exited(1), result.errors)
        XCTAssertEqual(result.output, "")
        XCTAssertEqual(rules(), "block +1900*\nring-twice\n")
        XCTAssertEqual(result.errors, "telwatch: block: \(rulesPath):2: unknown rule 'ring-twice' (block, allow, block-list, "
                       + "allow-list, withheld, unknown, quiet, except, voicemail, command); nothing was written; screening is off until it "
                       + "is fixed: every call rings\n")
    }

    /// A rules file grown to the daemon's limit: `block` said `blocked` and left a file the daemon
    /// refused (`larger than 1048576 bytes; screening is off`), so a blocked caller rang. Now the
    /// edit is checked with the daemon's own limit and parser first, and refused.
    func testAnEditThatWouldMakeTheFileTooLargeForTheDaemonIsRefused() throws {
        let limit = 1 << 20
        let head = "block +15550199\n"
        let padding = String(repeating: "#" + String(repeating: "-", count: 62) + "\n", count: (limit - head.utf8.count) / 64)
        var text = head + padding
        text += "#" + String(repeating: "-", count: limit - text.utf8.count - 2) + "\n"
        XCTAssertEqual(text.utf8.count, limit)
        try Files.write(rulesPath, text)
        let before = try XCTUnwrap(Files.text(rulesPath))
        let result = try edit(["block", "--screening", rulesPath, "+16660000001"])
        XCTAssertEqual(result.status, .exited(1), result.errors)
        XCTAssertEqual(result.output, "")
        XCTAssertEqual(result.errors, "telwatch: block: \(rulesPath) would be \(limit + 19) bytes, larger than the \(limit) "
                       + "bytes telwatch reads as a rules file (a block-list file holds up to 33554432 bytes); nothing "
                       + "was written\n")
        XCTAssertEqual(Files.text(rulesPath), before, "the file the daemon reads is as it was")
        try Files.write(rulesPath, String(text.dropLast(40)) + "\n")
        let fits = try edit(["block", "--screening", rulesPath, "+16660000001"])
        XCTAssertEqual(fits.status, .exited(0), fits.errors)
    }

    /// `telwatch block N` while `telwatch watch --screening FILE` runs: its next call from N is
    /// hung up; `telwatch allow N` and the next one rings. The watch says (--verbose) each time it
    /// has read the file, so the test waits for that, not for time.
    func testARunningWatchFollowsBlockAndAllowWithoutARestart() throws {
        try startModemManager()
        try Files.write(rulesPath, "# from the command line\n")
        let watch = try startWatch(["--screening", rulesPath, "--verbose"])
        let log = try XCTUnwrap(watch.logPath)
        func reads() -> Int { watch.log().components(separatedBy: "screening: read \(rulesPath): ").count - 1 }
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) { reads() == 1 }, watch.log())

        let blocked = try edit(["block", "--screening", rulesPath, "+15550123"])
        XCTAssertEqual(blocked.status, .exited(0), blocked.errors)
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) { reads() == 2 }, watch.log())
        let call = try ring("+1 555 0123")
        let screened = try XCTUnwrap(nextEvent(watch, "screened"), watch.log())
        XCTAssertEqual(screened["action"] as? String, "reject")
        XCTAssertEqual(screened["source"] as? String, rulesPath + ":2")
        XCTAssertEqual(nextEvent(watch, "disconnected")?["path"] as? String, call, "hung up at the stack")

        let allowed = try edit(["allow", "--screening", rulesPath, "+15550123"])
        XCTAssertEqual(allowed.status, .exited(0), allowed.errors)
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) { reads() == 3 }, watch.log())
        let rings = try ring("+15550123")
        var seen: [[String: Any]] = []
        let allowedCall = try XCTUnwrap(nextEvent(watch, "screened", seen: &seen), watch.log())
        XCTAssertEqual(allowedCall["action"] as? String, "allow")
        XCTAssertEqual(allowedCall["rule"] as? String, "allow")
        XCTAssertTrue(allowedCall["hangup"] is NSNull)
        try setState(rings, .terminated, reason: .terminated)
        XCTAssertNotNil(nextEvent(watch, "missed", seen: &seen), "it rang, unanswered: \(watch.log())")
        XCTAssertFalse(seen.contains { $0["event"] as? String == "screened" && $0["action"] as? String == "reject" })
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }
}
