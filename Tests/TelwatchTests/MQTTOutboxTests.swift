import CSQLite
import History
import SQLite
import TestSupport
import XCTest
@testable import MQTTExport

/// The outbox as read back from the state directory: a number in it that no telwatch writes
/// is a file to leave, not a counter to trap on.
final class MQTTOutboxTests: XCTestCase {
    func testAnOutboxNumberedPastWhatTelwatchWritesIsRefusedNotCountedOn() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // Each outbox's statements go with it (its lock is exclusive until then).
        do {
            let outbox = try MQTTOutbox(directory: scratch.path, limit: 10, maxAge: 3600)
            try outbox.add(seq: outbox.takeSeq(), time: 1_780_000_000, payload: "{}")
            try outbox.commit()
            try outbox.close()
        }
        do {
            let again = try MQTTOutbox(directory: scratch.path, limit: 10, maxAge: 3600)
            XCTAssertEqual(again.nextSeq, 2, "a real outbox goes on")
            try again.close()
        }

        for change in ["UPDATE outbox SET seq = 9223372036854775807", "UPDATE counter SET next_seq = 9223372036854775807"] {
            let database = try SQLiteDatabase(path: scratch.path + "/" + MQTTOutbox.fileName, flags: SQLITE_OPEN_READWRITE)
            try database.execute(change)
            database.close()
            XCTAssertThrowsError(try MQTTOutbox(directory: scratch.path, limit: 10, maxAge: 3600), change) { error in
                XCTAssertTrue("\(error)".contains("not telwatch's"), "\(error)")
            }
        }
    }
}
