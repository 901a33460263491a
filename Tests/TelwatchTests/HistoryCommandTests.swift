import CSQLite
import CallMonitor
import DBus
import Foundation
import Glibc
import Loop
import SQLite
import TestSupport
import XCTest
@testable import History

/// The call history as a user meets it: `telwatch watch` records the calls of the fake
/// ModemManager on a private bus, `telwatch log` lists them, `telwatch doctor` judges the file,
/// and a database that is locked, read-only, full, damaged or newer costs nothing but history.
final class HistoryCommandTests: CommandTestCase {
    static let call = "org.freedesktop.ModemManager1.Call"
    var historyPath: String { stateDirectory + "/history.db" }

    // MARK: Helpers

    /// `telwatch log --state-dir … ARGS` to its end.
    func log(_ arguments: [String] = [], prefix: [String] = []) throws -> (status: ChildExit?, output: String, errors: String) {
        let process = try fixture.start(prefix + [Self.telwatch, "log", "--state-dir", stateDirectory] + arguments,
                                        name: "telwatch-log")
        let output = process.readToEnd(timeout: 20)
        return (process.wait(timeout: 5), output, process.log())
    }

    /// `telwatch log --json`, each line parsed back.
    func loggedCalls(_ arguments: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        let result = try log(["--json"] + arguments)
        XCTAssertEqual(result.status, .exited(0), result.errors, file: file, line: line)
        return try result.output.split(separator: "\n").map { text in
            try XCTUnwrap(JSONLine.object(String(text)), "not JSON: \(text)", file: file, line: line)
        }
    }

    /// Returns once the daemon has written what its earlier turns changed: the history commits a
    /// turn before the loop waits, and a SIGUSR1 is read only after such a wait.
    func written(_ watch: TestProcess, file: StaticString = #filePath, line: UInt = #line) {
        watch.signal(SIGUSR1)
        XCTAssertNotNil(nextEvent(watch, "stats"), "no stats line", file: file, line: line)
    }

    /// One call row as a short text: number, state, direction, outcome flags, reason.
    func summary(_ row: [String: Any]) -> String {
        var parts = [row["number"] as? String ?? "?", row["state"] as? String ?? "?", row["direction"] as? String ?? "?"]
        parts.append(row["connected_at"] is NSNull ? "unanswered" : "answered")
        if row["missed"] as? Bool == true { parts.append("missed") }
        if row["unseen"] as? Bool == true { parts.append("unseen") }
        if !(row["reason"] is NSNull) { parts.append("reason=" + (row["reason"] as? String ?? "?")) }
        parts.append(row["duration"] is NSNull ? "no-duration" : "duration")
        return parts.joined(separator: " ")
    }

    func integrityCheck(file: StaticString = #filePath, line: UInt = #line) throws {
        let database = try SQLiteDatabase(path: historyPath, flags: SQLITE_OPEN_READONLY)
        XCTAssertEqual(try database.text("PRAGMA integrity_check"), "ok", file: file, line: line)
    }

    func stop(_ watch: TestProcess, file: StaticString = #filePath, line: UInt = #line) {
        watch.signal(SIGTERM)
        XCTAssertEqual(watch.wait(timeout: 15), .exited(0), watch.log(), file: file, line: line)
    }

    func path(_ text: String) throws -> DBusValue { .objectPath(try ObjectPath(text)) }

    /// The stderr lines of `watch` that speak of the history.
    func historyLines(_ watch: TestProcess) -> [String] {
        watch.log().split(separator: "\n").map(String.init).filter { $0.hasPrefix("telwatch: history:") }
    }

    /// An incoming call answered, so that its run holds the lock: the daemon's calls go on.
    func answeredCall(_ watch: TestProcess, _ number: String) throws -> String {
        let call = try ring(number)
        XCTAssertNotNil(nextEvent(watch, "incoming"), watch.log())
        try mm(call, Self.call, "Accept")
        XCTAssertNotNil(nextEvent(watch, "connected"), watch.log())
        return call
    }

    func hangUp(_ watch: TestProcess, _ call: String) throws {
        try control("RemoteHangup", [try path(call)])
        XCTAssertNotNil(nextEvent(watch, "disconnected"), watch.log())
        XCTAssertNotNil(nextEvent(watch, "run-stopped"), watch.log())
    }

    // MARK: What is recorded

    func testAScenarioOfCallsBecomesExactlyTheseRows() throws {
        try startModemManager()
        let watch = try startWatch()

        // Answered, then hung up by the far end.
        try hangUp(watch, try answeredCall(watch, "+15550001"))
        // Missed: the caller gives up.
        let missed = try ring("+15550002")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        try control("RemoteHangup", [try path(missed)])
        XCTAssertNotNil(nextEvent(watch, "missed"))
        // Rejected: hung up here while it rang.
        let rejected = try ring("+15550003")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        try mm(rejected, Self.call, "Hangup")
        XCTAssertNotNil(nextEvent(watch, "missed"))
        // Outgoing: dialled, ringing at the far end, answered, hung up here.
        let outgoing = try control("Dial", [try path(Self.modem0), .string("+15550004")]).first?.objectPath?.rawValue ?? ""
        XCTAssertNotNil(nextEvent(watch, "dialing"))
        try setState(outgoing, .ringingOut, reason: .outgoingStarted)
        try setState(outgoing, .active, reason: .accepted)
        XCTAssertNotNil(nextEvent(watch, "connected"))
        try mm(outgoing, Self.call, "Hangup")
        XCTAssertNotNil(nextEvent(watch, "disconnected"))
        // Waiting and held: one call answered, a second waits, the first is held and the second
        // answered; the far end of the second hangs up, then the first is hung up here.
        let first = try answeredCall(watch, "+15550005")
        let second = try control("Wait", [try path(Self.modem0), .string("+15550006")]).first?.objectPath?.rawValue ?? ""
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        try mm(Self.modem0, "org.freedesktop.ModemManager1.Modem.Voice", "HoldAndAccept")
        var seen: [[String: Any]] = []
        XCTAssertNotNil(nextEvent(watch, "connected", seen: &seen))
        XCTAssertNotNil(nextEvent(watch, "connected", seen: &seen))
        try control("RemoteHangup", [try path(second)])
        XCTAssertNotNil(nextEvent(watch, "disconnected"))
        try setState(first, .active, reason: .unknown)
        try mm(first, Self.call, "Hangup")
        XCTAssertNotNil(nextEvent(watch, "run-stopped"))
        written(watch)

        // Read while the daemon runs, newest first.
        let expected = [
            "+15550006 disconnected incoming answered reason=terminated duration",
            "+15550005 disconnected incoming answered reason=terminated duration",
            "+15550004 disconnected outgoing answered reason=terminated duration",
            "+15550003 disconnected incoming unanswered missed unseen reason=terminated duration",
            "+15550002 disconnected incoming unanswered missed unseen reason=terminated duration",
            "+15550001 disconnected incoming answered reason=terminated duration",
        ]
        let rows = try loggedCalls()
        XCTAssertEqual(rows.map(summary), expected)
        for row in rows {
            XCTAssertEqual(Array(row.keys).sorted(), WatchCommandTests.schema.filter {
                !["event", "time", "previous", "detail", "live_calls"].contains($0)
            }.appending(["resumed", "unseen", "screened"]).sorted(), "the event stream's keys, unseen and screened")
            XCTAssertNotNil(UUID(uuidString: row["call_id"] as? String ?? ""))
        }
        stop(watch)
        XCTAssertEqual(try loggedCalls().map(summary), expected, "the same once the daemon has stopped")

        // The table a person reads, and the filters.
        let text = try log()
        XCTAssertEqual(text.status, .exited(0), text.errors)
        let lines = text.output.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 7, text.output)
        XCTAssertTrue(lines[0].hasPrefix("first seen"), lines[0])
        XCTAssertTrue(lines[1].contains("in   +15550006") && lines[1].contains("answered   talked "), lines[1])
        XCTAssertTrue(lines[3].contains("out  +15550004"), lines[3])
        XCTAssertTrue(lines[4].contains("missed     after ") && lines[4].hasSuffix("unseen"), lines[4])
        XCTAssertEqual(try loggedCalls(["--missed"]).map { $0["number"] as? String }, ["+15550003", "+15550002"])
        XCTAssertEqual(try loggedCalls(["--number", "0004"]).map { $0["number"] as? String }, ["+15550004"])
        XCTAssertEqual(try loggedCalls(["--limit", "2"]).count, 2)
        XCTAssertEqual(try loggedCalls(["--since", "1h"]).count, 6)
        XCTAssertEqual(try loggedCalls(["--since", "2999-01-01"]).count, 0)
        try integrityCheck()
    }

    func testMissedCallsStayUnseenUntilMarkedSeen() throws {
        try startModemManager()
        let watch = try startWatch()
        for number in ["+15550011", "+15550012"] {
            let call = try ring(number)
            XCTAssertNotNil(nextEvent(watch, "incoming"))
            try control("RemoteHangup", [try path(call)])
            XCTAssertNotNil(nextEvent(watch, "run-stopped"))
        }
        written(watch)
        stop(watch)
        // Stopping and starting again keeps them unseen.
        let again = try startWatch()

        let unseen = try log(["--missed", "--unseen"])
        XCTAssertEqual(unseen.output.split(separator: "\n").count, 3, unseen.output)
        XCTAssertTrue(unseen.output.contains("+15550012") && unseen.output.contains("+15550011"), unseen.output)
        let marked = try log(["--unseen", "--mark-seen"])
        XCTAssertEqual(marked.status, .exited(0), marked.errors)
        XCTAssertEqual(marked.output.split(separator: "\n").count, 3, "it lists what it marks: \(marked.output)")
        XCTAssertTrue(marked.errors.contains("log: marked 2 missed calls seen"), marked.errors)
        XCTAssertEqual(try log(["--missed", "--unseen"]).output, "no calls match\n")
        XCTAssertEqual(try loggedCalls(["--missed"]).map { $0["unseen"] as? Bool }, [false, false], "still missed")

        // A new missed call is unseen again, and the daemon's writes keep the others seen.
        let call = try ring("+15550013")
        XCTAssertNotNil(nextEvent(again, "incoming"))
        try control("RemoteHangup", [try path(call)])
        XCTAssertNotNil(nextEvent(again, "run-stopped"))
        written(again)
        XCTAssertEqual(try loggedCalls(["--unseen"]).map { $0["number"] as? String }, ["+15550013"])
        try integrityCheck()
    }

    func testHostileCallerIDsAreStoredExactlyAndPrintedEscaped() throws {
        try startModemManager()
        let watch = try startWatch()
        let hostile = "=HYPERLINK(\"http://x\",\"y\"),\u{1B}[2J\n$(id)"
        let formula = "@SUM(1+1)"
        for number in [hostile, formula, "-1+2", "+15550021"] {
            let call = try ring(number)
            XCTAssertNotNil(nextEvent(watch, "incoming"))
            try control("RemoteHangup", [try path(call)])
            XCTAssertNotNil(nextEvent(watch, "run-stopped"))
        }
        written(watch)

        XCTAssertEqual(try loggedCalls().map { $0["number"] as? String }, ["+15550021", "-1+2", formula, hostile],
                       "stored and given back byte for byte")
        let text = try log()
        XCTAssertFalse(text.output.contains("\u{1B}"), "no raw escape reaches the terminal")
        XCTAssertTrue(text.output.contains(#"=HYPERLINK("http://x","y"),\e[2J\n$(id)"#), text.output)
        XCTAssertEqual(text.output.split(separator: "\n").count, 5, "one line per call: \(text.output)")

        let csv = try log(["--csv"])
        XCTAssertEqual(csv.status, .exited(0), csv.errors)
        let records = csv.output.components(separatedBy: "\r\n")
        XCTAssertEqual(records.count, 6, "a header, four records, and the empty rest after the last CRLF")
        XCTAssertTrue(records[0].hasPrefix("call_id,backend,modem,path,state,direction,number,name,reason,"), records[0])
        XCTAssertTrue(records[1].contains(",'+15550021,"), records[1])
        XCTAssertTrue(records[2].contains(",'-1+2,"), records[2])
        XCTAssertTrue(records[3].contains(",'@SUM(1+1),"), records[3])
        // The hostile one: escaped as the table is (no raw ESC or line break), quoted (it holds
        // quotes and a comma), quotes doubled, guarded.
        XCTAssertFalse(csv.output.contains("\u{1B}"), "no raw escape reaches the terminal")
        XCTAssertTrue(records[4].contains(#","'=HYPERLINK(""http://x"",""y""),\e[2J\n$(id)","#), records[4])
        XCTAssertEqual(records[5], "")

        let redacted = try loggedCalls(["--redact-numbers"])
        XCTAssertEqual(redacted.first?["number"] as? String, "*******21")
    }

    // MARK: Calls whose end was not seen

    func testASIGKILLMidCallLeavesARowTheNextStartClosesAsUnknownOnce() throws {
        try startModemManager()
        let watch = try startWatch()
        let call = try answeredCall(watch, "+15550031")
        written(watch)
        XCTAssertEqual(try loggedCalls().map(summary), ["+15550031 connected incoming answered reason=accepted no-duration"],
                       "live while the daemon runs")
        kill(watch.pid, SIGKILL)
        XCTAssertEqual(watch.wait(timeout: 10), .signaled(SIGKILL))
        try integrityCheck()
        // The call ends while no telwatch watches; the next one finds it ended: history, no event.
        try control("RemoteHangup", [try path(call)])

        let next = try startWatch(["--inhibit", "none"])
        let rows = try loggedCalls()
        XCTAssertEqual(rows.map(summary), ["+15550031 unknown incoming answered reason=accepted no-duration"])
        XCTAssertTrue(rows.first?["ended_at"] is NSNull)
        XCTAssertEqual(historyLines(next), ["telwatch: history: 1 call left live by a telwatch that stopped before its "
                                            + "end was closed as unknown"])
        let table = try log()
        XCTAssertTrue(table.output.contains("unknown    -"), table.output)
        stop(next)

        let third = try startWatch(["--inhibit", "none"])
        XCTAssertEqual(historyLines(third), [], "closed once")
        stop(third)
        XCTAssertEqual(try loggedCalls().map { $0["state"] as? String }, ["unknown"])
        try integrityCheck()
    }

    // MARK: Databases in a bad state

    /// What every bad state must leave alone: a call rings and holds the lock, is answered when
    /// `answer` says so, and ends; its run ends and the lock is released.
    func assertCallsGoOn(_ watch: TestProcess, _ number: String, answer: Bool = false,
                         file: StaticString = #filePath, line: UInt = #line) throws {
        let call = try ring(number)
        XCTAssertNotNil(nextEvent(watch, "incoming"), watch.log(), file: file, line: line)
        XCTAssertNotNil(logind.waitForInhibitors { $0.contains { $0.who == "telwatch" } },
                        "the lock is held", file: file, line: line)
        if answer {
            try mm(call, Self.call, "Accept")
            XCTAssertNotNil(nextEvent(watch, "connected"), watch.log(), file: file, line: line)
        }
        try control("RemoteHangup", [try path(call)])
        XCTAssertNotNil(nextEvent(watch, "run-stopped"), watch.log(), file: file, line: line)
        XCTAssertNotNil(logind.waitForInhibitors { !$0.contains { $0.who == "telwatch" } },
                        "the lock is released", file: file, line: line)
    }

    func testALockedDatabaseIsSaidOnceAndWrittenWhenItIsFree() throws {
        try startModemManager()
        try Files.makeDirectory(stateDirectory)
        try HistoryStore.openForDaemon(path: historyPath, busyTimeout: 1).close()
        let holder = try SQLiteDatabase(path: historyPath, flags: SQLITE_OPEN_READWRITE)
        try holder.execute("BEGIN IMMEDIATE")

        let watch = try startWatch()
        try assertCallsGoOn(watch, "+15550041", answer: true)
        try assertCallsGoOn(watch, "+15550042")
        written(watch)
        XCTAssertEqual(historyLines(watch), ["telwatch: history: \(historyPath) is locked by another program; the calls "
                                             + "are kept and written once it can be written"])
        XCTAssertEqual(try loggedCalls().count, 0, "nothing could be written yet")

        try holder.execute("COMMIT")
        holder.close()
        try assertCallsGoOn(watch, "+15550043")
        written(watch)
        XCTAssertEqual(historyLines(watch).last, "telwatch: history: writing to \(historyPath) again")
        XCTAssertEqual(try loggedCalls().map(summary), [
            "+15550043 disconnected incoming unanswered missed unseen reason=terminated duration",
            "+15550042 disconnected incoming unanswered missed unseen reason=terminated duration",
            "+15550041 disconnected incoming answered reason=terminated duration",
        ])
        stop(watch)
        try integrityCheck()
    }

    /// A file this telwatch may not write: as root, telwatch runs without the capabilities that
    /// let root write any file.
    var withoutOverride: [String] {
        geteuid() == 0 ? ["setpriv", "--inh-caps=-dac_override,-dac_read_search,-fowner",
                          "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"] : []
    }

    func testAReadOnlyDatabaseIsSaidOnceAndTheCallsGoOn() throws {
        try startModemManager()
        let seed = try startWatch()
        try hangUp(seed, try answeredCall(seed, "+15550051"))
        stop(seed)
        chmod(historyPath, 0o444)

        let watch = try fixture.start(withoutOverride + [Self.telwatch, "--bus", fixture.address, "--json",
                                                          "--backend", "modemmanager", "--state-dir", stateDirectory],
                                      name: "telwatch")
        XCTAssertNotNil(nextEvent(watch, "ready", timeout: 15), watch.log())
        try assertCallsGoOn(watch, "+15550052")
        XCTAssertEqual(historyLines(watch), ["telwatch: history: \(historyPath) cannot be written (opened read-only: no "
                                             + "write permission); the calls are kept and written once it can be written"])
        stop(watch)
        XCTAssertTrue(historyLines(watch).last?.contains("1 call could not be written") == true, watch.log())

        let read = try log()
        XCTAssertEqual(read.status, .exited(0), "a read-only history can be read: \(read.errors)")
        let doctor = try fixture.run(withoutOverride + [Self.telwatch, "doctor", "--bus", fixture.address,
                                                         "--backend", "modemmanager", "--state-dir", stateDirectory])
        XCTAssertTrue(doctor.output.contains("✘ call history: \(historyPath) cannot be written"), doctor.output)
        XCTAssertTrue(doctor.output.contains("fix: make \(historyPath) and its directory writable"), doctor.output)
        try integrityCheck()
    }

    func testAFullDiskIsSaidOnceAndWhatWaitedIsWrittenOnceThereIsRoom() throws {
        try startModemManager()
        let watch = try startWatch()
        let call = try answeredCall(watch, "+15550061")
        written(watch)
        // Any write past 4 KiB fails (EFBIG, as ENOSPC would): the WAL cannot grow.
        XCTAssertEqual(try fixture.run(["prlimit", "--pid", String(watch.pid), "--fsize=4096:"]).status, .exited(0))
        try hangUp(watch, call)
        try assertCallsGoOn(watch, "+15550062", answer: true)
        written(watch)
        XCTAssertEqual(historyLines(watch), ["telwatch: history: there is no room left for \(historyPath) (a full disk or "
                                             + "a file size limit); the calls are kept and written once it can be written"])

        XCTAssertEqual(try fixture.run(["prlimit", "--pid", String(watch.pid), "--fsize=unlimited:"]).status, .exited(0))
        try assertCallsGoOn(watch, "+15550063")
        written(watch)
        XCTAssertEqual(historyLines(watch).last, "telwatch: history: writing to \(historyPath) again")
        XCTAssertEqual(try loggedCalls().map { $0["number"] as? String }, ["+15550063", "+15550062", "+15550061"])
        XCTAssertEqual(try loggedCalls().map { $0["state"] as? String }, ["disconnected", "disconnected", "disconnected"])
        stop(watch)
        try integrityCheck()
    }

    /// The damaged files the daemon moved aside, beside the history.
    func movedAside() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? [])
            .filter { $0.hasPrefix("history.db.damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
            .map { stateDirectory + "/" + $0 }
    }

    func testDamagedDatabasesAreMovedAsideAndNewerOnesLeftAloneEachSaidOnce() throws {
        try startModemManager()
        // A database with its table's page overwritten, a file that is no database, a newer schema.
        let seed = try startWatch()
        try hangUp(seed, try answeredCall(seed, "+15550071"))
        stop(seed)
        let damaged = try XCTUnwrap(Files.bytes(historyPath))
        var broken = damaged
        for offset in 4096..<min(broken.count, 8192) { broken[offset] = 0xA5 }
        let garbage = Array(String(repeating: "not a database; ", count: 512).utf8)

        let cases: [(name: String, bytes: [UInt8]?, expect: String, fix: String)] = [
            ("damaged page", broken, "is damaged (", "fix: move it away with its WAL (mv \(historyPath) \(historyPath).broken; "
             + "mv \(historyPath)-wal \(historyPath).broken-wal, if there is one)"),
            ("not a database", garbage, "is damaged (file is not a database)", "fix: move it away"),
            ("newer schema", nil, "was written by a newer telwatch (schema 9; this one knows 3)",
             "fix: run the telwatch that wrote it, or move it away"),
        ]
        for (name, bytes, expect, fix) in cases {
            for file in [historyPath, historyPath + "-wal", historyPath + "-shm"] + movedAside() { unlink(file) }
            if let bytes {
                XCTAssertTrue(FileManager.default.createFile(atPath: historyPath, contents: Data(bytes)), name)
            } else {
                XCTAssertTrue(FileManager.default.createFile(atPath: historyPath, contents: Data(damaged)), name)
                try SQLiteDatabase(path: historyPath, flags: SQLITE_OPEN_READWRITE).execute("PRAGMA user_version = 9")
            }
            let before = Files.bytes(historyPath)

            // What `log` and `doctor` say of it: one line each, with the fix.
            let read = try log()
            XCTAssertEqual(read.status, .exited(1), "\(name): \(read.output)")
            XCTAssertEqual(read.errors.split(separator: "\n").count, 1, "\(name): \(read.errors)")
            XCTAssertTrue(read.errors.contains(expect), "\(name): \(read.errors)")
            let doctor = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                       "--state-dir", stateDirectory])
            XCTAssertEqual(doctor.status, .exited(4), "\(name): \(doctor.output)")
            let historyLine = doctor.output.split(separator: "\n").first { $0.contains("call history") }.map(String.init) ?? ""
            XCTAssertTrue(historyLine.hasPrefix("✘ call history: \(historyPath) "), "\(name): \(doctor.output)")
            XCTAssertTrue(historyLine.contains(expect), "\(name), one clear line: \(doctor.output)")
            XCTAssertTrue(doctor.output.contains("\n    " + fix), "\(name): \(doctor.output)")

            let watch = try startWatch()
            try assertCallsGoOn(watch, "+15550072")
            try assertCallsGoOn(watch, "+15550073")
            stop(watch)
            let said = historyLines(watch)
            XCTAssertEqual(said.count, 1, "\(name): \(said)")
            XCTAssertTrue(said.first?.contains(expect) == true, "\(name): \(said)")
            if bytes == nil {
                XCTAssertTrue(said.first?.contains(fix) == true, "\(name): \(said)")
                XCTAssertTrue(Files.bytes(historyPath) == before, "\(name): the newer telwatch's file is left as it was")
                XCTAssertEqual(try log().status, .exited(1), name)
                continue
            }
            // Moved aside as it was found, and the calls recorded in a new history.
            let aside = movedAside()
            XCTAssertEqual(aside.count, 1, "\(name): \(aside)")
            XCTAssertTrue(said.first?.contains("; moved it aside to \(aside.first ?? "?") and started a new history") == true,
                          "\(name): \(said)")
            XCTAssertTrue(Files.bytes(aside.first ?? "") == before, "\(name): the damaged file is kept as it was")
            XCTAssertEqual(try loggedCalls().map { $0["number"] as? String }, ["+15550073", "+15550072"], name)
            try integrityCheck()
        }
    }

    /// Overwritten with random bytes while telwatch runs (the telwatch group may write the file):
    /// SQLite in WAL mode would go on writing its WAL and never look at the file again. The next
    /// write finds it, says so once, moves it aside and writes every call to a new history.
    func testAHistoryOverwrittenWhileTelwatchRunsLosesNoCall() throws {
        try startModemManager()
        let watch = try startWatch()
        try hangUp(watch, try answeredCall(watch, "+15550101"))
        written(watch)
        let overwrite = try fixture.run(["dd", "if=/dev/urandom", "of=" + historyPath, "bs=4096", "count=8", "status=none"])
        XCTAssertEqual(overwrite.status, .exited(0), overwrite.output)
        let noise = Files.bytes(historyPath)

        try assertCallsGoOn(watch, "+15550102", answer: true)
        try assertCallsGoOn(watch, "+15550103")
        stop(watch)
        let aside = movedAside()
        XCTAssertEqual(aside.count, 1, "\(aside)")
        XCTAssertEqual(historyLines(watch), ["telwatch: history: \(historyPath) is damaged (file is not a database); moved it "
                                             + "aside to \(aside.first ?? "?") and started a new history; the calls are kept "
                                             + "and written to it"])
        XCTAssertTrue(Files.bytes(aside.first ?? "") == noise, "the damaged file is kept as it was found")
        XCTAssertEqual(try loggedCalls().map(summary), [
            "+15550103 disconnected incoming unanswered missed unseen reason=terminated duration",
            "+15550102 disconnected incoming answered reason=terminated duration",
        ])
        try integrityCheck()
    }

    /// A member of the group may write anything into a row: `log` (table, JSON, CSV) shows what
    /// cannot be a time or a duration as unknown, and never crashes.
    func testHostileValuesInARowAreShownAsUnknown() throws {
        try Files.makeDirectory(stateDirectory)
        try HistoryStore.openForDaemon(path: historyPath, busyTimeout: 1).close()
        let database = try SQLiteDatabase(path: historyPath, flags: SQLITE_OPEN_READWRITE)
        for (n, (duration, connected)) in [("1e19", "NULL"), ("5", "-1e300"), ("-1e999", "1e999")].enumerated() {
            try database.execute("""
                INSERT INTO calls (call_id, backend, modem, path, state, direction, number, name, multiparty, initial, \
                resumed, missed, first_seen, connected_at, ended_at, duration) VALUES ('call-\(n)', 'modemmanager', '', '', \
                'disconnected', 'incoming', '+1555011\(n)', '', 0, 0, 0, 0, 1780000000, \(connected), 1780000100, \(duration))
                """)
        }
        try database.execute("""
            INSERT INTO calls (call_id, backend, modem, path, state, direction, number, name, multiparty, initial, resumed, \
            missed, first_seen, connected_at) VALUES ('live', 'modemmanager', '', '', 'connected', 'incoming', '+15550119', '', \
            0, 0, 0, 0, 1780000000, -1e300)
            """)
        database.close()

        let text = try log()
        XCTAssertEqual(text.status, .exited(0), text.errors)
        let lines = text.output.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 5, text.output)
        XCTAssertTrue(lines.contains { $0.contains("+15550110") && !$0.contains("after") }, "no duration: \(text.output)")
        XCTAssertTrue(lines.contains { $0.contains("+15550111") && $0.contains("after 5.0 s") }, text.output)
        XCTAssertTrue(lines.contains { $0.contains("+15550119") && $0.contains("for ") }, text.output)
        let json = try loggedCalls()
        XCTAssertEqual(json.count, 4)
        XCTAssertTrue(json.allSatisfy { $0["connected_at"] is NSNull }, "\(json)")
        XCTAssertEqual(json.filter { $0["duration"] is NSNull }.count, 3, "\(json)")
        let csv = try log(["--csv"])
        XCTAssertEqual(csv.status, .exited(0), csv.errors)
        XCTAssertEqual(csv.output.components(separatedBy: "\r\n").count, 6, csv.output)
    }

    /// A read-only file system under the state directory (a read-only bind mount, in telwatch's
    /// own mount namespace): the lock an earlier start left is taken read-only, the calls are
    /// kept, and written once the file system is read-write again. `doctor` names the real cause.
    func testAReadOnlyStateDirectoryKeepsTheCallsAndWritesThemOnceItIsWritable() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root for unshare -m and a read-only bind mount") }
        try startModemManager()
        let seed = try startWatch()
        try hangUp(seed, try answeredCall(seed, "+15550131"))
        stop(seed)
        let readOnly = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                        "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && exec \"$@\"", stateDirectory]

        let doctor = try fixture.run(readOnly + [Self.telwatch, "doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                                 "--state-dir", stateDirectory])
        XCTAssertTrue(doctor.output.contains("✘ state directory \(stateDirectory) is on a read-only file system: runs are "
                                             + "not recorded, and the history keeps its calls in memory until it can write them"),
                      doctor.output)
        XCTAssertTrue(doctor.output.contains("fix: remount it read-write"), doctor.output)
        XCTAssertFalse(doctor.output.contains("chown"), "no chown makes a read-only file system writable: \(doctor.output)")

        let watch = try fixture.start(readOnly + [Self.telwatch, "--bus", fixture.address, "--json", "--backend",
                                                  "modemmanager", "--state-dir", stateDirectory], name: "telwatch")
        XCTAssertNotNil(nextEvent(watch, "ready", timeout: 15), watch.log())
        try assertCallsGoOn(watch, "+15550132")
        XCTAssertEqual(historyLines(watch), ["telwatch: history: \(historyPath) cannot be written (opened read-only: a "
                                             + "read-only file system); the calls are kept and written once it can be written"])
        XCTAssertFalse(watch.log().contains("cannot use the state directory"), watch.log())

        // Read-write again, in telwatch's mount namespace: what it kept is written.
        let remount = try fixture.run(["nsenter", "-t", String(watch.pid), "-m", "mount", "-o", "remount,bind,rw",
                                       stateDirectory])
        XCTAssertEqual(remount.status, .exited(0), remount.log)
        try assertCallsGoOn(watch, "+15550133")
        written(watch)
        XCTAssertEqual(historyLines(watch).last, "telwatch: history: writing to \(historyPath) again")
        stop(watch)
        XCTAssertEqual(try loggedCalls().map { $0["number"] as? String }, ["+15550133", "+15550132", "+15550131"])
        try integrityCheck()
    }

    /// A state directory that is a file, or one asked for that does not exist: said, not taken
    /// for an empty history or a writable directory.
    func testAStateDirectoryThatIsAFileOrIsMissingIsSaidByLogAndDoctor() throws {
        try startModemManager()
        try Files.write(stateDirectory, "not a directory\n")
        let read = try log()
        XCTAssertEqual(read.status, .exited(1), read.output)
        XCTAssertEqual(read.errors, "telwatch: log: state directory \(stateDirectory) is a regular file, not a directory; "
                       + "pass the one telwatch keeps its state in (--state-dir)\n")
        let doctor = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory])
        XCTAssertEqual(doctor.status, .exited(4), doctor.output)
        XCTAssertTrue(doctor.output.contains("✘ state directory \(stateDirectory) is a regular file, not a directory: "
                                             + "telwatch runs without one"), doctor.output)
        XCTAssertFalse(doctor.output.contains("✔ state directory"), doctor.output)
        XCTAssertFalse(doctor.output.contains("will be created"), doctor.output)
        let below = try runToEnd(["log", "--state-dir", stateDirectory + "/below"])
        XCTAssertEqual(below.status, .exited(1), below.output)
        XCTAssertTrue(below.errors.contains("a part of its path is not a directory"), below.errors)

        let missing = fixture.directory + "/no-such-state"
        let gone = try runToEnd(["log", "--state-dir", missing])
        XCTAssertEqual(gone.status, .exited(1), gone.output)
        XCTAssertEqual(gone.output, "")
        XCTAssertEqual(gone.errors, "telwatch: log: state directory \(missing) does not exist: no telwatch has kept its "
                       + "state there; pass the one it runs with (--state-dir, or state-dir in the config file)\n")
    }

    // MARK: Reading, and turning it off

    func testLogAndDoctorReadTheHistoryAsAUserWhoMayOnlyReadIt() throws {
        try startModemManager()
        let watch = try startWatch()
        try hangUp(watch, try answeredCall(watch, "+15550081"))
        written(watch)
        let doctor = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory])
        XCTAssertTrue(doctor.output.contains("✔ call history \(historyPath): 1 call, 0 missed unseen; calls are kept 365 days"),
                      doctor.output)
        stop(watch)
        XCTAssertFalse(Files.exists(historyPath + "-wal"), "the daemon's last close folds the WAL in")

        // Another user, who may read the directory and the file but write neither.
        let prefix: [String]
        if geteuid() == 0 {
            chmod(fixture.directory, 0o711)
            chmod(stateDirectory, 0o755)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        } else {
            chmod(stateDirectory, 0o555)
            prefix = []
        }
        defer { chmod(stateDirectory, 0o700) }
        chmod(historyPath, 0o644)
        let read = try log(["--json"], prefix: prefix)
        XCTAssertEqual(read.status, .exited(0), read.errors)
        XCTAssertEqual(read.output.split(separator: "\n").compactMap { JSONLine.object(String($0))?["number"] as? String },
                       ["+15550081"])
        XCTAssertFalse(Files.exists(historyPath + "-shm"), "a reader that may not write leaves nothing behind")
    }

    func testNoHistoryRecordsNothingAndLogSaysSo() throws {
        try startModemManager()
        let watch = try startWatch(["--no-history"])
        try assertCallsGoOn(watch, "+15550091")
        stop(watch)
        XCTAssertFalse(Files.exists(historyPath))
        let text = try log()
        XCTAssertEqual(text.status, .exited(0))
        XCTAssertEqual(text.output, "no calls recorded yet (\(historyPath) does not exist)\n")
        XCTAssertEqual(try log(["--json"]).output, "")
        XCTAssertEqual(try log(["--csv"]).output.components(separatedBy: "\r\n").count, 2, "the header alone")
        let doctor = try runToEnd(["doctor", "--no-history", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory])
        XCTAssertTrue(doctor.output.contains("call history is off"), doctor.output)
    }

    /// Without `--state-dir`, `log` asks the service on the bus it is given for its directory,
    /// as `status` and `events` do.
    func testLogFindsTheServiceOnTheBusItIsGiven() throws {
        try startModemManager()
        let watch = try startWatch()
        try hangUp(watch, try answeredCall(watch, "+15550121"))
        written(watch)
        let found = try runToEnd(["log", "--json", "--bus", fixture.address])
        XCTAssertEqual(found.status, .exited(0), found.errors)
        XCTAssertTrue(found.errors.contains("log: state directory \(stateDirectory) (the running service's (pid \(watch.pid)))"),
                      found.errors)
        XCTAssertEqual(found.output.split(separator: "\n").compactMap { JSONLine.object(String($0))?["number"] as? String },
                       ["+15550121"])
        stop(watch)
    }

    func testLogRefusesNonsenseWithOneLine() throws {
        for arguments in [["--limit", "0"], ["--since", "yesterday"], ["--json", "--csv"], ["--number", ""],
                          ["--missed=yes"], ["--bus"]] {
            let result = try log(arguments)
            XCTAssertEqual(result.status, .exited(2), "\(arguments): \(result.errors)")
            XCTAssertEqual(result.errors.split(separator: "\n").count, 1, "\(arguments): \(result.errors)")
            XCTAssertEqual(result.output, "")
        }
    }
}

private extension Array where Element == String {
    func appending(_ more: [String]) -> [String] { self + more }
}
