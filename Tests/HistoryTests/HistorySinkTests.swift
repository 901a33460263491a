import CSQLite
import Foundation
import CallMonitor
import Glibc
import Loop
import Pipeline
import SQLite
import TestSupport
import XCTest
@testable import History

/// The sink against real SQLite: what a call's life leaves in the database, when it is written
/// (once per loop turn, only what changed), and what happens when the file cannot be written.
final class HistorySinkTests: HistoryTestCase {
    func testACallsLifeIsOneRowBroughtUpToDateAsItChanges() throws {
        startSink()
        ring(1, "+15551234")
        turn()
        var row = try XCTUnwrap(rows().first)
        XCTAssertEqual(row.callID, "id-1")
        XCTAssertEqual(row.state, "incoming")
        XCTAssertEqual(row.direction, "incoming")
        XCTAssertEqual(row.number, "+15551234")
        XCTAssertEqual(row.firstSeen, now)
        XCTAssertNil(row.endedAt)

        now += 2
        change(1, .live(.connected, .active), reason: "accepted")
        turn()
        row = try XCTUnwrap(rows().first)
        XCTAssertEqual(row.state, "connected")
        XCTAssertEqual(row.connectedAt, now)

        now += 30
        end(1)
        turn()
        let all = try rows()
        XCTAssertEqual(all.count, 1, "one row per call")
        row = try XCTUnwrap(all.first)
        XCTAssertEqual(row.state, "disconnected")
        XCTAssertEqual(row.reason, "terminated")
        XCTAssertEqual(row.endedAt, now)
        XCTAssertEqual(row.duration, 30)
        XCTAssertFalse(row.missed)
        XCTAssertFalse(row.unseen)
    }

    func testAMissedCallIsUnseenAndARejectedOneIsMissedToo() throws {
        startSink()
        ring(1, "+15550001")
        now += 5
        end(1)
        ring(2, "+15550002")
        now += 1
        end(2, reason: "refused-or-busy")
        turn()
        let all = try rows()
        XCTAssertEqual(all.map(\.callID), ["id-2", "id-1"], "newest first")
        XCTAssertTrue(all.allSatisfy { $0.missed && $0.unseen })
        XCTAssertEqual(all.map(\.duration), [1, 5], "how long each rang")
        XCTAssertEqual(try rows(HistoryQuery(unseenOnly: true)).count, 2)
    }

    /// What screening did is on the call's row: said in the turn it rang, or a turn later (a
    /// hang-up that failed), and kept through its end.
    func testAScreenedCallsRowSaysWhatScreeningDid() throws {
        startSink()
        ring(1, "+19005550100")
        let call = try XCTUnwrap(tracker.liveCalls.first)
        let decision = ScreeningDecision(action: .reject, rule: .block)
        sink?.receive(Delivery(.screened(ScreenedCall(call: call, decision: decision, hangup: .requested), time: now), liveCalls: 1))
        turn()
        XCTAssertEqual(try rows().map(\.screened), ["reject"])
        sink?.receive(Delivery(.screened(ScreenedCall(call: call, decision: decision, hangup: .failed("no")), time: now),
                      liveCalls: 1))
        turn()
        XCTAssertEqual(try rows().map(\.screened), ["allow"], "the hang-up failed: it rang")
        now += 5
        end(1)
        ring(2, "+15550002")
        turn()
        XCTAssertEqual(try rows().map(\.screened), [nil, "allow"])
        XCTAssertEqual(try rows(HistoryQuery(screenedOnly: true)), [])
    }

    func testEachTurnIsOneTransactionAndOnlyChangesAreWritten() throws {
        startSink()
        let observer = try openDatabase()
        ring(1, "+15550001")
        dial(2, "+15550002")
        XCTAssertTrue(try rows().isEmpty, "nothing is written while the turn's events are delivered")
        var version = try dataVersion(observer)
        turn()
        XCTAssertNotEqual(try dataVersion(observer), version, "the turn is committed before the loop waits")
        XCTAssertEqual(try rows().count, 2)

        change(2, .live(.dialing, .alerting))
        change(1, .live(.connected, .active))
        change(1, .live(.connected, .held))
        change(1, .live(.connected, .active))
        version = try dataVersion(observer)
        turn()
        XCTAssertNotEqual(try dataVersion(observer), version, "the answer is written")

        // Alerting, held and active again change nothing history keeps.
        change(2, .live(.dialing, .dialing))
        change(1, .live(.connected, .held))
        version = try dataVersion(observer)
        turn()
        turn()
        XCTAssertEqual(try dataVersion(observer), version, "no transaction for changes history does not keep")
    }

    func testTheDatabaseIsOpenedOnceTelwatchIsReadyOrForTheFirstCall() throws {
        let history = startSink(ready: false)
        turn()
        XCTAssertFalse(Files.exists(path), "start-up pays nothing for the history")
        history.receive(Delivery(.ready(time: now), liveCalls: 0))
        turn()
        XCTAssertTrue(Files.exists(path))
        history.finish {}
        sink = nil
        unlink(path)

        startSink(ready: false)
        ring(1, "+15550001")
        turn()
        XCTAssertEqual(try rows().map(\.number), ["+15550001"], "a call live before ready is recorded anyway")
    }

    func testTheSinkNeverAsksTheLoopToWakeIt() throws {
        let history = startSink()
        runStarted()
        ring(1, "+15550001")
        XCTAssertNil(history.prepare())
        end(1)
        runStopped()
        XCTAssertNil(history.prepare())
        XCTAssertNil(history.prepare())
    }

    /// A run's calls are read live by `telwatch log` at once (a crash of telwatch keeps them: the
    /// WAL is in the page cache), and made durable against a power cut `syncDelay` after the run
    /// ended: one sync for every run that ended meanwhile, none in the turn of a ring or of a
    /// run's end (a ring right after a call waits for no disk), and no timer left armed after.
    func testARunsCallsAreSyncedOnceAfterTheDelayAndTheTimerDisarmed() throws {
        let history = startSink(syncDelay: 0.2)
        let syncsAtStart = history.walSyncs
        runStarted()
        ring(1, "+15550001")
        turn()
        XCTAssertEqual(try rows().map(\.state), ["incoming"], "read live by another program")
        end(1)
        runStopped()
        turn()
        runStarted()
        ring(2, "+15550002")
        turn()
        end(2)
        runStopped()
        turn()
        XCTAssertEqual(try rows().map(\.state), ["disconnected", "disconnected"])
        XCTAssertEqual(history.walSyncs, syncsAtStart, "no sync in the turns of the calls")
        XCTAssertTrue(history.syncPending)
        XCTAssertTrue(loop.run(until: { history.walSyncs > syncsAtStart }, timeout: 10), "synced after the delay")
        XCTAssertEqual(history.walSyncs, syncsAtStart + 1, "both runs in one sync")
        XCTAssertFalse(history.syncPending, "nothing armed while everything is synced")
    }

    /// The delay ends while another call is live: the sync waits for no call to be live (a
    /// second ring is never slowed by the first call's sync), and comes with that call's end.
    func testASyncDueWhileACallIsLiveWaitsForItsEnd() throws {
        let history = startSink(syncDelay: 0.05)
        let syncsAtStart = history.walSyncs
        runStarted()
        ring(1, "+15550001")
        end(1)
        runStopped()
        turn()
        runStarted()
        ring(2, "+15550002")
        turn()
        XCTAssertTrue(loop.run(until: { !history.syncTimerArmed }, timeout: 10), "the delay ended")
        turn()
        XCTAssertEqual(history.walSyncs, syncsAtStart, "no sync while a call is live")
        end(2)
        runStopped()
        turn()
        XCTAssertEqual(history.walSyncs, syncsAtStart + 1)
        XCTAssertFalse(history.syncPending)
        XCTAssertEqual(try rows().map(\.state), ["disconnected", "disconnected"])
    }

    func testStickyFlagsAndANumberThatArrivesLate() throws {
        startSink()
        apply(.callAppeared(mmKey(1), modem: mmModem, CallObservation(phase: .live(.connected, .active), direction: .incoming,
                                                                       number: "", multiparty: true), initial: true))
        apply(.callChanged(mmKey(1), CallObservation(number: "+15559999", multiparty: false)))
        turn()
        var row = try XCTUnwrap(rows().first)
        XCTAssertEqual(row.number, "+15559999")
        XCTAssertTrue(row.multiparty, "a call once in a conference stays marked so")
        XCTAssertTrue(row.initial)
        end(1)
        turn()
        row = try XCTUnwrap(rows().first)
        XCTAssertTrue(row.multiparty)
        XCTAssertEqual(row.connectedAt, row.firstSeen, "first seen connected")
        XCTAssertEqual(row.duration, 0)
    }

    func testHostileCallerIDsAreStoredExactly() throws {
        startSink()
        let hostile = "'; DROP TABLE calls; --\u{1B}[2J\n\"x\",=1+1\u{0}\u{202E}"
        ring(1, hostile)
        apply(.callChanged(mmKey(1), CallObservation(name: "Robert'); DROP TABLE calls;--")))
        turn()
        let row = try XCTUnwrap(rows().first)
        XCTAssertEqual(row.number, hostile)
        XCTAssertEqual(row.name, "Robert'); DROP TABLE calls;--")
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    func testACallAnEarlierTelwatchLeftLiveIsClosedAsUnknownOnce() throws {
        startSink()
        ring(1, "+15550001")
        change(1, .live(.connected, .active))
        turn()
        // Killed: no finish, the row stays live.
        sink = nil
        XCTAssertEqual(try rows().first?.state, "connected")

        tracker = CallTracker(makeID: { "id-next" })
        startSink()
        XCTAssertEqual(reports, ["history: 1 call left live by a telwatch that stopped before its end was closed as unknown"])
        var row = try XCTUnwrap(rows().first)
        XCTAssertEqual(row.state, "unknown")
        XCTAssertNil(row.endedAt)
        XCTAssertNil(row.duration)
        XCTAssertNotNil(row.connectedAt, "what was known is kept")
        sink?.finish {}
        sink = nil

        reports = []
        startSink()
        XCTAssertEqual(reports, [], "closed once")
        row = try XCTUnwrap(rows().first)
        XCTAssertEqual(row.state, "unknown")
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    func testStoppingClosesTheCallsStillLiveAsUnknown() throws {
        let history = startSink()
        ring(1, "+15550001")
        dial(2, "+15550002")
        end(2)
        var finished = false
        history.finish { finished = true }
        sink = nil
        XCTAssertTrue(finished)
        let all = try rows()
        XCTAssertEqual(all.map(\.state), ["disconnected", "unknown"], "written at the stop, the live one closed")
    }

    func testPruningHappensAtStartAndAfterARunOnlyOnceADay() throws {
        let day = 86_400.0
        startSink(keep: 30 * day)
        // Calls of 40 and 20 days ago, recorded then.
        now -= 40 * day
        ring(1, "+15550040")
        end(1)
        turn()
        now += 20 * day
        ring(2, "+15550020")
        end(2)
        turn()
        sink?.finish {}
        now += 20 * day

        startSink(keep: 30 * day)
        XCTAssertEqual(try rows().map(\.number), ["+15550020"], "pruned at start")

        // 15 days on: the call of 35 days ago is due, but goes only when a run has ended.
        now += 15 * day
        runStarted()
        ring(3, "+15550000")
        end(3)
        turn()
        XCTAssertEqual(try rows().count, 2, "never while a run is live")
        runStopped()
        turn()
        XCTAssertEqual(try rows().map(\.number), ["+15550000"], "pruned after the run")

        // The same day: a second run prunes nothing, even with a call now past its time.
        now += 3600
        apply(.backendLost(.modemManager))
        runStarted()
        ring(4, "+15550004")
        end(4)
        runStopped()
        turn()
        XCTAssertEqual(try rows().count, 2)
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    func testKeepZeroKeepsEveryCall() throws {
        startSink(keep: nil)
        now -= 3000 * 86_400
        ring(1, "+15550001")
        end(1)
        turn()
        sink?.finish {}
        now += 3000 * 86_400
        startSink(keep: nil)
        XCTAssertEqual(try rows().count, 1)
    }

    func testALockedDatabaseIsSaidOnceAndItsCallsAreWrittenLater() throws {
        startSink()
        let holder = try openDatabase()
        try holder.execute("BEGIN IMMEDIATE")
        ring(1, "+15550001")
        turn()
        ring(2, "+15550002")
        turn()
        end(1)
        turn()
        XCTAssertEqual(reports, ["history: \(path) is locked by another program; the calls are kept and written once it can be written"])

        try holder.execute("COMMIT")
        end(2)
        turn()
        XCTAssertEqual(reports.last, "history: writing to \(path) again")
        let all = try rows()
        XCTAssertEqual(all.map(\.callID), ["id-2", "id-1"])
        XCTAssertEqual(all.map(\.state), ["disconnected", "disconnected"])
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    func testAWriteWaitsNoLongerThanTheBusyTimeout() throws {
        startSink(busyTimeout: 0.05)
        let holder = try openDatabase()
        try holder.execute("BEGIN IMMEDIATE")
        ring(1, "+15550001")
        let start = monotonicNow()
        turn()
        let waited = monotonicNow() - start
        XCTAssertLessThan(waited, 1, "the loop is never held long by another program's lock")
        try holder.execute("ROLLBACK")
    }

    func testWhatWaitsIsBounded() throws {
        startSink(keep: nil, pendingLimit: 3)
        let holder = try openDatabase()
        try holder.execute("BEGIN IMMEDIATE")
        for n in 1...5 { ring(n, "+1555000\(n)") }
        turn()
        try holder.execute("COMMIT")
        end(1)
        turn()
        XCTAssertEqual(try rows().map(\.callID), ["id-3", "id-2", "id-1"])
        XCTAssertTrue(reports.contains("history: 3 calls are waiting to be written to \(path); newer calls are not recorded "
                                       + "until it can be written"), "\(reports)")
        XCTAssertEqual(reports.last, "history: writing to \(path) again; 2 calls were not recorded meanwhile")
    }

    /// The damaged files moved aside beside the history.
    private func movedAside() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory))?
            .filter { $0.hasPrefix(HistoryStore.fileName + ".damaged-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
            .map { directory + "/" + $0 } ?? []
    }

    func testADamagedFileIsMovedAsideOnceAsItIsAndTheCallsGoOnInANewOne() throws {
        let garbage = String(repeating: "not a database, ", count: 400)
        try Files.write(path, garbage)
        startSink()
        ring(1, "+15550001")
        turn()
        end(1)
        turn()
        let aside = movedAside()
        XCTAssertEqual(aside.count, 1, "\(aside)")
        XCTAssertEqual(reports, ["history: \(path) is damaged (file is not a database); moved it aside to "
                                 + "\(aside.first ?? "?") and started a new history; the calls are kept and written to it"])
        XCTAssertTrue(Files.text(aside.first ?? "") == garbage, "moved as it was, never written over")
        XCTAssertEqual(try rows().map(\.number), ["+15550001"])
        XCTAssertEqual(try rows().map(\.state), ["disconnected"])
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    /// Overwritten in place while the daemon has it open: SQLite in WAL mode would go on writing
    /// its WAL and never read the file again. The next write finds it, and loses nothing.
    func testAFileOverwrittenUnderTheDaemonIsFoundAtTheNextWriteAndNoCallIsLost() throws {
        startSink()
        ring(1, "+15550001")
        end(1)
        turn()
        XCTAssertEqual(try rows().count, 1)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<16_384).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let fd = open(path, O_WRONLY | O_TRUNC)
        XCTAssertEqual(noise.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }, noise.count)
        close(fd)

        ring(2, "+15550002")
        turn()
        end(2)
        ring(3, "+15550003")
        end(3)
        turn()
        let aside = movedAside()
        XCTAssertEqual(aside.count, 1, "\(aside)")
        XCTAssertEqual(reports.count, 1, "said once: \(reports)")
        XCTAssertTrue(reports.first?.hasPrefix("history: \(path) is damaged (file is not a database); moved it aside to "
                                               + "\(aside.first ?? "?")") == true, "\(reports)")
        XCTAssertTrue(Files.bytes(aside.first ?? "") == noise, "the damaged file is kept as it was found")
        XCTAssertEqual(try rows().map(\.number), ["+15550003", "+15550002"], "both calls after the damage")
        XCTAssertEqual(try rows().map(\.state), ["disconnected", "disconnected"])
        XCTAssertEqual(try integrityCheck(), "ok")
    }

    /// Replaced by a rename (or removed) while the daemon has it open: its connection would write
    /// a file no one reads. The calls go on in the file now there.
    func testAFileReplacedUnderTheDaemonIsOpenedAfresh() throws {
        startSink()
        ring(1, "+15550001")
        end(1)
        turn()
        let other = directory + "/other.db"
        try HistoryStore.openForDaemon(path: other, busyTimeout: 0.05).close()
        XCTAssertEqual(rename(other, path), 0)
        ring(2, "+15550002")
        end(2)
        turn()
        XCTAssertEqual(reports, ["history: \(path) was replaced or removed while telwatch ran; the calls go on in the file now there"])
        XCTAssertEqual(try rows().map(\.number), ["+15550002"])
    }

    /// Someone who damages the file again and again gets no heap of copies: after a few, history is off.
    func testDamageAgainAndAgainStopsAfterAFewCopies() throws {
        startSink()
        for n in 1...(HistorySink.startOverLimit + 2) {
            try Files.write(path, String(repeating: "not a database, ", count: 400))
            ring(n, "+1555000\(n)")
            end(n)
            turn()
        }
        XCTAssertEqual(movedAside().count, HistorySink.startOverLimit)
        XCTAssertEqual(reports.count, HistorySink.startOverLimit + 1, "\(reports)")
        XCTAssertTrue(reports.last?.contains("calls are not recorded until telwatch starts again") == true, "\(reports)")
    }

    func testANewerSchemaIsLeftAlone() throws {
        let database = try SQLiteDatabase(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        try database.execute("CREATE TABLE future (x); PRAGMA user_version = 7")
        database.close()
        let before = Files.bytes(path)
        startSink()
        ring(1, "+15550001")
        turn()
        XCTAssertEqual(reports, ["history: \(path) was written by a newer telwatch (schema 7; this one knows 3); calls are "
                                 + "not recorded until telwatch starts again; fix: run the telwatch that wrote it, or move "
                                 + "it away with its WAL to start a new history"])
        XCTAssertTrue(Files.bytes(path) == before, "the newer telwatch's file is not touched")
    }

    /// MQTT asks the count in the turn's publish phase, before the history's own write: the
    /// answer counts the turn's missed call already, and asking writes nothing (the disk write
    /// stays in the persist phase, after the turn's lines and messages).
    func testTheMissedUnseenCountIncludesTheTurnsCallsAndAskingWritesNothing() throws {
        let history = startSink()
        ring(1, "+15550001")
        end(1)
        turn()
        XCTAssertEqual(history.missedUnseen(), 1)
        ring(2, "+15550002")
        end(2)
        XCTAssertEqual(history.missedUnseen(), 2, "the call missed this turn counts already")
        XCTAssertEqual(try rows().count, 1, "asking wrote nothing")
        turn()
        XCTAssertEqual(try rows(HistoryQuery(unseenOnly: true)).count, 2)
        XCTAssertEqual(history.missedUnseen(), 2)
    }

    /// Marked seen by another program (`telwatch log --mark-seen`): counted again once a run ended.
    func testMissedCallsMarkedSeenElsewhereAreCountedAfterARun() throws {
        let history = startSink()
        runStarted()
        ring(1, "+15550001")
        end(1)
        runStopped()
        turn()
        XCTAssertEqual(history.missedUnseen(), 1)
        let database = try openDatabase()
        try database.execute("UPDATE calls SET seen = 1")
        database.close()
        runStarted()
        runStopped()
        XCTAssertEqual(history.missedUnseen(), 0)
    }
}
