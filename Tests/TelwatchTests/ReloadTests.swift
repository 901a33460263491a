import CallMonitor
import Foundation
import Glibc
import TestSupport
import XCTest

/// SIGHUP reads the configuration again without touching the live run.
final class ReloadTests: CommandTestCase {
    /// A FIFO a hook writes to: the test wakes when the hook runs, instead of polling a file.
    /// (Hook commands in the config file are split on spaces, no shell quoting: `echo>>FIFO`.)
    private func hookRecord(_ name: String = "hook-record") throws -> (path: String, reader: Int32) {
        let path = logind.directory + "/" + name
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        return (path, open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC))
    }

    /// SIGHUP, then SIGUSR1: signals pending together are taken lowest number first, so the
    /// `stats` line comes once the reload is done.
    private func reload(_ watch: TestProcess, file: StaticString = #filePath, line: UInt = #line) {
        watch.signal(SIGHUP)
        watch.signal(SIGUSR1)
        XCTAssertNotNil(nextEvent(watch, "stats"), "no stats after SIGHUP:\n\(watch.log())", file: file, line: line)
    }

    func testSIGHUPReloadsHooksKeepsTheRunAndSaysWhatWaitsForARestart() throws {
        try startModemManager()
        let (first, firstReader) = try hookRecord("first")
        let (second, secondReader) = try hookRecord("second")
        defer { close(firstReader); close(secondReader) }
        let config = logind.directory + "/telwatch.conf"
        try "json = true\nlease = 1h\nhook.incoming = /bin/sh -c echo>>\(first)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let watch = try startWatch(["--config", config])
        _ = try ring("+15550001")
        XCTAssertNotNil(nextEvent(watch, "run-started"))
        XCTAssertEqual(LineReader(fd: firstReader).next(timeout: 10), .line(""), "the first configuration's hook ran")

        try "json = true\nlease = 2h\nhook.incoming = /bin/sh -c echo>>\(second)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        reload(watch)
        XCTAssertTrue(watch.log().contains("telwatch: reloaded the configuration; these take effect at the next "
                                           + "start: lease"), watch.log())

        _ = try ring("+15550002")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertEqual(LineReader(fd: secondReader).next(timeout: 10), .line(""), "the reloaded hook ran")
        watch.signal(SIGTERM)
        let rest = watch.readToEnd(timeout: 10)
        let runEvents = rest.split(separator: "\n").compactMap { JSONLine.object(String($0))?["event"] as? String }
            .filter { $0.hasPrefix("run-") }
        XCTAssertEqual(runEvents, ["run-stopped"], "one run from the first ring to the end: the reload kept it")
    }

    func testAConfigurationThatNoLongerParsesChangesNothing() throws {
        try startModemManager()
        let (record, reader) = try hookRecord()
        defer { close(reader) }
        let config = logind.directory + "/telwatch.conf"
        try "json = true\nhook.incoming = /bin/sh -c echo>>\(record)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let watch = try startWatch(["--config", config])
        try "json = true\nlease = soon\nhook.incoming = /bin/false\n".write(toFile: config, atomically: true, encoding: .utf8)
        reload(watch)
        XCTAssertTrue(watch.log().contains("telwatch: SIGHUP: the configuration was not reloaded, nothing changed: "
                                           + "\(config):2: --lease takes a duration"), watch.log())
        _ = try ring("+15550003")
        XCTAssertNotNil(nextEvent(watch, "incoming"))
        XCTAssertEqual(LineReader(fd: reader).next(timeout: 10), .line(""), "the old hook still runs")
    }
}
