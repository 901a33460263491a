import BGRunManager
import Glibc
import Loop
import TestSupport
import XCTest

/// Whatever stands where the run record belongs, telwatch starts, says what it found once, and
/// keeps the device awake during calls.
final class RunRecordPlaceTests: RunTestCase {
    private var recordPath: String { stateDirectory + "/" + RunStateStore.recordName }

    private func stateErrors() -> [String] {
        events.compactMap { if case .stateError(let why) = $0.kind { return why }; return nil }
    }

    /// A run still takes the lock, whatever happened to the record.
    private func assertRunsStillHoldTheLock(_ manager: BGRunManager, file: StaticString = #filePath, line: UInt = #line) {
        manager.join("call", reason: "incoming")
        waitForEvent("lock-taken", file: file, line: line) { $0.isLockTaken }
        XCTAssertEqual(try harness.inhibitors().count, 1, file: file, line: line)
        manager.leave("call")
        waitForNoInhibitors(file: file, line: line)
    }

    func testALinkToDevZeroIsRemovedNotRead() throws {
        try startHarness()
        try Files.makeDirectory(stateDirectory)
        XCTAssertEqual(symlink("/dev/zero", recordPath), 0)
        let manager = try makeManager()
        XCTAssertEqual(stateErrors().count, 1, "\(stateErrors())")
        XCTAssertTrue(stateErrors()[0].contains("symbolic link"), stateErrors()[0])
        var info = stat()
        XCTAssertNotEqual(lstat(recordPath, &info), 0, "the link is gone")
        XCTAssertEqual(access("/dev/zero", R_OK), 0, "and not what it pointed to")
        assertRunsStillHoldTheLock(manager)
        XCTAssertEqual(stateErrors().count, 1)
    }

    func testAFIFOIsNotOpenedForGoodAndNotRemoved() throws {
        try startHarness()
        try Files.makeDirectory(stateDirectory)
        XCTAssertEqual(mkfifo(recordPath, 0o600), 0)
        let manager = try makeManager()
        XCTAssertEqual(stateErrors().count, 1, "\(stateErrors())")
        XCTAssertTrue(stateErrors()[0].contains("is not a regular file"), stateErrors()[0])
        assertRunsStillHoldTheLock(manager)
        XCTAssertEqual(stateErrors().count, 1, "said once, not at every write")
        var info = stat()
        XCTAssertEqual(lstat(recordPath, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO, "someone else's file is left alone")
    }

    func testADirectoryIsSaidOnceAndLeftAlone() throws {
        try startHarness()
        try Files.makeDirectory(stateDirectory)
        try Files.makeDirectory(recordPath)
        let manager = try makeManager()
        XCTAssertEqual(stateErrors().count, 1, "\(stateErrors())")
        XCTAssertTrue(stateErrors()[0].contains("not a regular file"), stateErrors()[0])
        XCTAssertFalse(events.contains { $0.kind.isStale })
        assertRunsStillHoldTheLock(manager)
        assertRunsStillHoldTheLock(manager)
        XCTAssertEqual(stateErrors().count, 1, "said once")
        var info = stat()
        XCTAssertEqual(stat(recordPath, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFDIR)
    }

    func testAnOversizedOrGarbledRecordIsRemoved() throws {
        try startHarness()
        try Files.makeDirectory(stateDirectory)
        try Files.write(recordPath, String(repeating: "x", count: 100_000))
        _ = try makeManager()
        XCTAssertEqual(stateErrors().count, 1)
        XCTAssertTrue(stateErrors()[0].contains("larger than"), stateErrors()[0])
        XCTAssertFalse(Files.exists(recordPath))

        manager = nil
        forgetEvents()
        try Files.write(recordPath, "version=1\nrun_id=\n")
        let again = try makeManager()
        XCTAssertEqual(stateErrors(), ["an unreadable run record was left in \(stateDirectory); removed"])
        assertRunsStillHoldTheLock(again)
    }
}
