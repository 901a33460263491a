import CallMonitor
import Foundation
import Glibc
import TestSupport
import XCTest

/// `--contacts` in the real telwatch: the contact's name on the number in JSON, text and hooks,
/// escaped like a number, and followed when the file is replaced while telwatch runs.
final class ContactsCommandTests: CommandTestCase {
    private let hostile = "Eve \u{1B}[2J\n$(id) \"'; rm -rf ~ #"

    private func contactsFile() throws -> String {
        let path = logind.directory + "/contacts.vcf"
        // The name's newline travels as vCard's `\n`; the escape byte raw.
        let escaped = hostile.replacing("\n", with: "\\n")
        try Files.write(path, "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:\(escaped)\r\nTEL;TYPE=CELL:+49 171 1234567\r\nEND:VCARD\r\n")
        return path
    }

    func testJSONAndHooksCarryTheHostileNameExactly() throws {
        try startModemManager()
        let record = logind.directory + "/contact"
        let config = logind.directory + "/telwatch.conf"
        try Files.write(config, "hook.incoming = /bin/sh -c 'printf %s \"$TELWATCH_CONTACT\" > \"$0.tmp\"; mv \"$0.tmp\" \"$0\"' \(record)\n")
        let watch = try startWatch(["--contacts", try contactsFile(), "--config", config])
        _ = try ring("01711234567")
        let incoming = try XCTUnwrap(nextEvent(watch, "incoming"))
        XCTAssertEqual(incoming["contact"] as? String, hostile, "the national form found the international entry")
        XCTAssertEqual(incoming["number"] as? String, "01711234567")
        XCTAssertTrue(Files.waitUntil(record, timeout: 10) { Files.exists(record) }, watch.log())
        XCTAssertEqual(Files.text(record), hostile, "the hook got the name byte for byte")
    }

    func testDoctorReadsTheContactsOfTheConfigFile() throws {
        try startModemManager()
        let config = logind.directory + "/telwatch.conf"
        let good = try contactsFile()
        try Files.write(config, "contacts = \(good)\n")
        let passed = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory, "--config", config])
        XCTAssertTrue(passed.output.contains("✔ contacts \(good): 1 numbers"), passed.output)
        XCTAssertEqual(passed.status, .exited(0), passed.output)

        let bad = logind.directory + "/broken.vcf"
        try Files.write(bad, "BEGIN:VCARD\nFN:Cut short\nTEL:+15550001\n")
        try Files.write(config, "contacts = \(bad)\n")
        let failed = try runToEnd(["doctor", "--bus", fixture.address, "--backend", "modemmanager",
                                   "--state-dir", stateDirectory, "--config", config])
        XCTAssertTrue(failed.output.contains("✘ contacts: \(bad): line 1: this card has no END:VCARD"), failed.output)
        XCTAssertEqual(failed.status, .exited(4), failed.output)
    }

    func testTextOutputEscapesTheNameAndAReplacedFileIsFollowed() throws {
        try startModemManager()
        let path = try contactsFile()
        let watch = try telwatch(["--bus", fixture.address, "--backend", "modemmanager", "--state-dir", stateDirectory,
                                  "--contacts", path, "--verbose"])
        XCTAssertNotNil(watch.readLine(timeout: 15) { $0.contains("synced") }, watch.log())
        XCTAssertTrue(watch.log().contains("telwatch: contacts: 1 numbers from \(path) in "), watch.log())
        let first = try ring("+491711234567")
        let line = try XCTUnwrap(watch.readLine(timeout: 10) { $0.contains("incoming") }, watch.log())
        XCTAssertFalse(line.contains("\u{1B}"), "no raw escape reaches the terminal: \(line)")
        XCTAssertTrue(line.contains(#"contact="Eve \e[2J\n$(id) \"'; rm -rf ~ #""#), line)
        try setState(first, .terminated, reason: .terminated)

        // Saved the way editors save: a new file renamed over the old one.
        try Files.write(path + ".new", "+491711234567\tAda\n")
        XCTAssertEqual(rename(path + ".new", path), 0)
        let log = try XCTUnwrap(watch.logPath)
        XCTAssertTrue(Files.waitUntil(log, timeout: 10) { watch.log().contains("contacts: read again: 1 numbers") },
                      watch.log())
        _ = try ring("01711234567")
        XCTAssertNotNil(watch.readLine(timeout: 10) { $0.contains("incoming") && $0.contains("contact=Ada") }, watch.log())
        watch.signal(SIGINT)
        XCTAssertEqual(watch.wait(timeout: 10), .exited(0))
    }
}
