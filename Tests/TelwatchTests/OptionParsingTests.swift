import CallMonitor
import DBus
import Glibc
import TestSupport
import XCTest
@testable import telwatch

/// `telwatch [watch]` and the subcommands' options and config file, parsed in-process: what each
/// spelling sets, which file settings flags override, and the one line a mistake prints.
final class OptionParsingTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/telwatch-options-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed") }
        directory = String(cString: made)
    }

    override func tearDown() {
        // Only the config files this test wrote live here, so a flat removal is all it takes.
        for name in Files.names(in: directory) { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    // MARK: Helpers

    private func parse(_ arguments: [String], command: String? = nil, accepting: Set<String>? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws -> WatchOptions {
        try XCTUnwrap(WatchArguments.parse(arguments, command: command, accepting: accepting),
                      "\(arguments) asked for help", file: file, line: line)
    }

    /// The text of the `UsageError` parsing `arguments` throws ("" if it throws none, after failing).
    private func usageError(_ arguments: [String], command: String? = nil, accepting: Set<String>? = nil,
                            file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try WatchArguments.parse(arguments, command: command, accepting: accepting)
            XCTFail("\(arguments) was accepted", file: file, line: line)
        } catch let error as UsageError {
            return error.description
        } catch {
            XCTFail("\(arguments) threw \(error), not a UsageError", file: file, line: line)
        }
        return ""
    }

    /// Asserts that `text` names every one of `words`.
    private func assertNames(_ text: String, _ words: String..., file: StaticString = #filePath, line: UInt = #line) {
        for word in words {
            XCTAssertTrue(text.contains(word), "'\(text)' does not name \(word)", file: file, line: line)
        }
    }

    private func config(_ text: String, name: String = "telwatch.conf") throws -> String {
        let path = directory + "/" + name
        try Files.write(path, text)
        return path
    }

    // MARK: Values of `telwatch watch`

    func testNoOptionsGiveTheDocumentedDefaults() throws {
        let options = try parse([])
        XCTAssertEqual(options.backend, .auto)
        XCTAssertEqual(options.bus, .system)
        XCTAssertFalse(options.json)
        XCTAssertEqual(options.inhibitWhat, "sleep")
        XCTAssertEqual(options.inhibitMode, "block")
        XCTAssertNil(options.hooksDirectory)
        XCTAssertTrue(options.hookCommands.isEmpty)
        XCTAssertEqual(options.runCommand, [])
        XCTAssertEqual(options.lease, 4 * 3600)
        XCTAssertNil(options.heartbeat)
        XCTAssertEqual(options.hookTimeout, 30)
        XCTAssertEqual(options.stopGrace, 5)
        XCTAssertFalse(options.redactNumbers)
        XCTAssertEqual(options.verbosity, .normal)
        XCTAssertNil(options.stateDirectory)
        XCTAssertFalse(options.wakelock)
        XCTAssertFalse(options.sleepDelayLock)
        XCTAssertNil(options.resumeGrace)
        XCTAssertTrue(options.history)
        XCTAssertEqual(options.historyKeep, 365 * 86_400)
    }

    func testEveryOptionWithAValueParsesTheSameInBothSpellings() throws {
        let cases: [(option: String, value: String, check: (WatchOptions) -> Bool)] = [
            ("--backend", "modemmanager", { $0.backend == .modemManager }),
            ("--backend", "ofono", { $0.backend == .ofono }),
            ("--backend", "auto", { $0.backend == .auto }),
            ("--bus", "session", { $0.bus == .session }),
            ("--bus", "system", { $0.bus == .system }),
            ("--bus", "unix:path=/run/test/bus", { $0.bus == .address("unix:path=/run/test/bus") }),
            ("--inhibit", "none", { $0.inhibitWhat == nil }),
            ("--inhibit", "sleep:idle:delay", { $0.inhibitWhat == "sleep:idle" && $0.inhibitMode == "delay" }),
            ("--inhibit", "handle-lid-switch", { $0.inhibitWhat == "handle-lid-switch" && $0.inhibitMode == "block" }),
            ("--hooks", "/etc/telwatch/hooks", { $0.hooksDirectory == "/etc/telwatch/hooks" }),
            ("--hook-timeout", "1.5m", { $0.hookTimeout == 90 }),
            ("--lease", "90s", { $0.lease == 90 }),
            ("--lease", "5m", { $0.lease == 300 }),
            ("--lease", "2h", { $0.lease == 7200 }),
            ("--lease", "45", { $0.lease == 45 }),
            ("--lease", "none", { $0.lease == nil }),
            ("--heartbeat", "60s", { $0.heartbeat == 60 }),
            ("--heartbeat", "none", { $0.heartbeat == nil }),
            ("--stop-grace", "0", { $0.stopGrace == 0 }),
            ("--stop-grace", "2s", { $0.stopGrace == 2 }),
            ("--state-dir", "/var/lib/telwatch", { $0.stateDirectory == "/var/lib/telwatch" }),
            ("--resume-grace", "10s", { $0.resumeGrace == 10 }),
            ("--resume-grace", "none", { $0.resumeGrace == nil }),
            ("--history-keep", "30d", { $0.historyKeep == 30 * 86_400 }),
            ("--history-keep", "48h", { $0.historyKeep == 2 * 86_400 }),
            ("--history-keep", "0", { $0.historyKeep == nil }),
            ("--history-keep", "3650d", { $0.historyKeep == 3650 * 86_400 }),
        ]
        for (option, value, check) in cases {
            XCTAssertTrue(check(try parse([option, value])), "\(option) \(value)")
            XCTAssertTrue(check(try parse([option + "=" + value])), "\(option)=\(value)")
        }
    }

    func testAValueAfterEqualsKeepsItsOwnEqualsSigns() throws {
        XCTAssertEqual(try parse(["--bus=unix:path=/run/a=b"]).bus, .address("unix:path=/run/a=b"))
        XCTAssertEqual(usageError(["--hooks="]), "--hooks takes a directory path, not ''")
    }

    func testFlagsSetWhatTheyName() throws {
        XCTAssertTrue(try parse(["--json"]).json)
        XCTAssertTrue(try parse(["--redact-numbers"]).redactNumbers)
        XCTAssertTrue(try parse(["--wakelock"]).wakelock)
        XCTAssertTrue(try parse(["--sleep-delay-lock"]).sleepDelayLock)
        XCTAssertEqual(try parse(["--quiet"]).verbosity, .quiet)
        XCTAssertEqual(try parse(["-q"]).verbosity, .quiet)
        XCTAssertEqual(try parse(["--verbose"]).verbosity, .verbose)
        XCTAssertEqual(try parse(["-v"]).verbosity, .verbose)
    }

    func testOptionsCombineAndTheLastOfARepeatedOneWins() throws {
        let options = try parse(["--json", "--backend", "ofono", "--lease=1h", "--bus", "session", "--lease", "2h",
                                 "--redact-numbers", "--state-dir=/tmp/x"])
        XCTAssertTrue(options.json)
        XCTAssertEqual(options.backend, .ofono)
        XCTAssertEqual(options.lease, 7200)
        XCTAssertEqual(options.bus, .session)
        XCTAssertTrue(options.redactNumbers)
        XCTAssertEqual(options.stateDirectory, "/tmp/x")
    }

    func testRunTakesEverythingAfterItsDoubleDashAsTheCommand() throws {
        let options = try parse(["--json", "--run", "--", "pw-play", "--loop", "--json", "keepalive.wav"])
        XCTAssertEqual(options.runCommand, ["pw-play", "--loop", "--json", "keepalive.wav"])
        XCTAssertTrue(options.json)
        let after = try parse(["--run", "--", "sleep", "1"])
        XCTAssertFalse(after.json, "options after -- belong to the command")
    }

    func testRunWithoutDoubleDashTakesOneWord() throws {
        let options = try parse(["--run", "keepalive", "--json"])
        XCTAssertEqual(options.runCommand, ["keepalive"])
        XCTAssertTrue(options.json)
        XCTAssertEqual(try parse(["--run=keepalive"]).runCommand, ["keepalive"])
    }

    func testHelpAsksForHelpInsteadOfOptions() throws {
        XCTAssertNil(try WatchArguments.parse(["--help"]))
        XCTAssertNil(try WatchArguments.parse(["-h"]))
        XCTAssertNil(try WatchArguments.parse(["--json", "--help"]))
        XCTAssertNil(try WatchArguments.parse(["--help"], command: "status", accepting: StatusCommand.acceptedOptions))
    }

    // MARK: The config file

    func testConfigFileSetsEverySettingByItsLongName() throws {
        let path = try config("""
        # a comment, then a blank line

          # an indented comment
        backend = ofono
        bus = unix:path=/run/telwatch/bus
        json = yes
        inhibit = sleep:idle:delay
        hooks = /etc/telwatch/hooks
        hook.missed = /usr/local/bin/log-missed  --loud
        hook.missed = /usr/local/bin/second
        hook.run-started = notify-send run
        hook-timeout = 10s
        run = /usr/bin/pw-play --loop silence.wav
        lease = 30m
        heartbeat = 1m
        stop-grace = 0
        redact-numbers = on
        state-dir = /var/lib/telwatch
        wakelock = 1
        sleep-delay-lock = TRUE
        resume-grace = 10s
        verbosity = verbose
        history = false
        history-keep = 90d
        """)
        let options = try parse(["--config", path])
        XCTAssertEqual(options.backend, .ofono)
        XCTAssertEqual(options.bus, .address("unix:path=/run/telwatch/bus"))
        XCTAssertTrue(options.json)
        XCTAssertEqual(options.inhibitWhat, "sleep:idle")
        XCTAssertEqual(options.inhibitMode, "delay")
        XCTAssertEqual(options.hooksDirectory, "/etc/telwatch/hooks")
        XCTAssertEqual(options.hookCommands["missed"] ?? [], [["/usr/local/bin/log-missed", "--loud"],
                                                              ["/usr/local/bin/second"]])
        XCTAssertEqual(options.hookCommands["run-started"] ?? [], [["notify-send", "run"]])
        XCTAssertEqual(options.hookTimeout, 10)
        XCTAssertEqual(options.runCommand, ["/usr/bin/pw-play", "--loop", "silence.wav"])
        XCTAssertEqual(options.lease, 1800)
        XCTAssertEqual(options.heartbeat, 60)
        XCTAssertEqual(options.stopGrace, 0)
        XCTAssertTrue(options.redactNumbers)
        XCTAssertEqual(options.stateDirectory, "/var/lib/telwatch")
        XCTAssertTrue(options.wakelock)
        XCTAssertTrue(options.sleepDelayLock)
        XCTAssertEqual(options.resumeGrace, 10)
        XCTAssertEqual(options.verbosity, .verbose)
        XCTAssertFalse(options.history)
        XCTAssertEqual(options.historyKeep, 90 * 86_400)
    }

    func testConfigFileTakesQuietAndVerboseLikeTheFlags() throws {
        XCTAssertEqual(try parse(["--config", try config("quiet = true\n")]).verbosity, .quiet)
        XCTAssertEqual(try parse(["--config", try config("verbose = yes\n")]).verbosity, .verbose)
        XCTAssertEqual(try parse(["--config", try config("quiet = false\n")]).verbosity, .normal)
        XCTAssertEqual(try parse(["--config", try config("quiet = true\n"), "--verbose"]).verbosity, .verbose)
    }

    func testConfigFileToleratesTabsCarriageReturnsAndNoFinalNewline() throws {
        let path = try config("\tjson\t=\ttrue\r\n  lease=5m  \r\n\r\nbackend =modemmanager")
        let options = try parse(["--config=" + path])
        XCTAssertTrue(options.json)
        XCTAssertEqual(options.lease, 300)
        XCTAssertEqual(options.backend, .modemManager)
        let windows = try config("json = true\r\n# a comment\r\nlease = soon\r\n", name: "windows.conf")
        XCTAssertEqual(usageError(["--config", windows]),
                       "\(windows):3: --lease takes a duration from 10s to 366d \(Self.units), such as 30, 90s, 5m or 1h, not 'soon'")
    }

    /// A byte-order mark that an editor wrote first gave `unknown setting '\u{FEFF}backend'`.
    func testAByteOrderMarkBeforeTheFirstKeyIsTaken() throws {
        let path = try config("\u{FEFF}backend = ofono\njson = true\n")
        let options = try parse(["--config", path])
        XCTAssertEqual(options.backend, .ofono)
        XCTAssertTrue(options.json)
    }

    /// `screening = rel-rules.conf` named a file in the command's current directory (`/` for the
    /// service, and for `telwatch block` run from `/`): a relative path in the config file is
    /// taken from the config file's directory; on the command line, from the current one.
    func testARelativePathInTheConfigFileIsTakenFromItsDirectory() throws {
        let path = try config("screening = rel-rules.conf\ncontacts = people/book.vcf\nhooks = hooks\n"
                              + "mqtt-credentials = mqtt.secret\n")
        let options = try parse(["--config", path])
        XCTAssertEqual(options.screeningFile, directory + "/rel-rules.conf")
        XCTAssertEqual(options.contactsFile, directory + "/people/book.vcf")
        XCTAssertEqual(options.hooksDirectory, directory + "/hooks")
        XCTAssertEqual(options.mqtt.credentialsFile, directory + "/mqtt.secret")
        XCTAssertEqual(try parse(["--config", path, "--screening", "mine.conf"]).screeningFile, "mine.conf")
        XCTAssertEqual(try parse(["--config", try config("screening = /etc/telwatch/screening.conf\n", name: "abs.conf")])
            .screeningFile, "/etc/telwatch/screening.conf")
        let state = try config("state-dir = state\n", name: "state.conf")
        XCTAssertEqual(usageError(["--config", state]), "\(state):1: --state-dir takes an absolute directory path, not 'state'")
    }

    func testTheShippedConfigFileParses() throws {
        let options = try parse(["--config", Repository.path("dist/telwatch.conf")])
        XCTAssertEqual(options.backend, .auto)
        XCTAssertEqual(options.inhibitWhat, "sleep")
        XCTAssertEqual(options.inhibitMode, "block")
        XCTAssertEqual(options.lease, 4 * 3600)
        XCTAssertEqual(options.historyKeep, 365 * 86_400)
        XCTAssertTrue(options.history)
    }

    func testTheAPIIsOnByDefaultOnTheWatchedBusAndItsFlagsAndKeysParse() throws {
        let defaults = try parse([])
        XCTAssertTrue(defaults.api)
        XCTAssertNil(defaults.apiBus, "the bus watched")
        XCTAssertFalse(try parse(["--no-api"]).api)
        XCTAssertFalse(try parse(["--config", try config("api = false\n")]).api)
        XCTAssertEqual(try parse(["--api-bus", "session"]).apiBus, .session)
        XCTAssertEqual(try parse(["--config", try config("api-bus = system\n")]).apiBus, .system)
        XCTAssertEqual(usageError(["--api-bus", "unix:path=/x"]), "--api-bus takes system or session, not 'unix:path=/x'")
        XCTAssertEqual(usageError(["--no-api=1"]), "--no-api takes no value")
        XCTAssertEqual(try parse([]).settingsNeedingARestart(comparedWith: try parse(["--no-api", "--api-bus", "session"])),
                       ["api", "api-bus"])
    }

    func testEventsTakesOnlyWhatItsUsageLineNames() throws {
        try assertTakes("events", exactly: EventsCommand.acceptedOptions, configPath: try config("json = true\n"))
    }

    func testNoHistoryTurnsTheHistoryOffAndAKeepBelowADayIsRefused() throws {
        XCTAssertFalse(try parse(["--no-history"]).history)
        XCTAssertFalse(try parse(["--config", try config("history = true\n"), "--no-history"]).history, "the flag wins")
        XCTAssertEqual(usageError(["--no-history=1"]), "--no-history takes no value")
        for bad in ["12h", "soon", "-1d", "1e9d", "", "36601d", "0x10d"] {
            XCTAssertEqual(usageError(["--history-keep", bad]),
                           "--history-keep takes 0 (keep every call) or a duration from 1d to 36600d \(Self.units), "
                           + "such as 90d or 52w, not '\(bad)'")
        }
    }

    func testFlagsWinOverTheConfigFileWhereverItStands() throws {
        let path = try config("""
        inhibit = none
        json = false
        lease = 1h
        backend = ofono
        hooks = /from/file
        run = from-file
        quiet = true
        """)
        for arguments in [["--config", path, "--inhibit", "sleep:delay", "--json", "--lease=2h", "--run", "--", "flag"],
                          ["--inhibit", "sleep:delay", "--json", "--lease=2h", "--config", path, "--run", "--", "flag"]] {
            let options = try parse(arguments)
            XCTAssertEqual(options.inhibitWhat, "sleep", "\(arguments)")
            XCTAssertEqual(options.inhibitMode, "delay", "\(arguments)")
            XCTAssertTrue(options.json, "\(arguments)")
            XCTAssertEqual(options.lease, 7200, "\(arguments)")
            XCTAssertEqual(options.runCommand, ["flag"], "\(arguments)")
            XCTAssertEqual(options.backend, .ofono, "a setting no flag names stays as the file says")
            XCTAssertEqual(options.hooksDirectory, "/from/file")
            XCTAssertEqual(options.verbosity, .quiet)
        }
        XCTAssertEqual(try parse(["--verbose", "--config", path]).verbosity, .verbose)
    }

    func testAConfigFileAfterDoubleDashIsTheRunCommandsArgument() throws {
        let options = try parse(["--run", "--", "tool", "--config", "/nonexistent/telwatch.conf"])
        XCTAssertEqual(options.runCommand, ["tool", "--config", "/nonexistent/telwatch.conf"])
    }

    // MARK: Mistakes: one UsageError naming the option and the bad value

    func testAnUnknownOptionIsNamedWithWhereToLook() {
        let text = usageError(["--json", "--frobnicate"])
        XCTAssertEqual(text, "unknown option '--frobnicate' (see telwatch --help)")
        XCTAssertEqual(usageError(["extra"]), "unknown option 'extra' (see telwatch --help)")
        XCTAssertEqual(usageError(["--verbosity", "quiet"]), "unknown option '--verbosity' (see telwatch --help)")
    }

    func testAMissingValueNamesTheOption() {
        for option in ["--backend", "--bus", "--inhibit", "--hooks", "--lease", "--heartbeat", "--hook-timeout",
                       "--stop-grace", "--state-dir", "--resume-grace", "--config", "--run"] {
            XCTAssertEqual(usageError(["--json", option]), "\(option) needs a value")
        }
    }

    static let units = "(digits, a fraction allowed, then ms, s, m, h, d or w; without a unit: seconds)"

    /// One grammar for every duration setting: days and weeks wherever a year is in range, and
    /// the same words in a flag and in the config file.
    func testEveryDurationSettingTakesTheSameUnits() throws {
        let parsed = try parse(["--lease", "1d", "--hook-timeout", "1.5m", "--heartbeat", "2w", "--stop-grace", "250ms",
                                "--resume-grace", "0.5h", "--history-keep", "52w"])
        XCTAssertEqual(parsed.lease, 86_400)
        XCTAssertEqual(parsed.hookTimeout, 90)
        XCTAssertEqual(parsed.heartbeat, 14 * 86_400)
        XCTAssertEqual(parsed.stopGrace, 0.25)
        XCTAssertEqual(parsed.resumeGrace, 1800)
        XCTAssertEqual(parsed.historyKeep, 52 * 7 * 86_400)
        XCTAssertEqual(try parse(["--config", try config("lease = 2d\nhistory-keep = 90d\n")]).lease, 2 * 86_400)
        XCTAssertEqual(try Parse.since("1w", now: 1_000_000), 1_000_000 - 604_800)
        XCTAssertEqual(try Parse.since("1.5h", now: 10_000), 10_000 - 5400)
        for bad in ["0x10s", "1e1h", "+2h", "2 h", "3600"] {
            XCTAssertThrowsError(try Parse.since(bad, now: 0)) { error in
                XCTAssertEqual("\(error)", "--since takes a duration from 0 to 36600d (digits, a fraction allowed, then ms, s, m, "
                               + "h, d or w), such as 90m, 2h or 7d, or a date (2026-11-29, 2026-11-29 08:00), not '\(bad)'")
            }
        }
    }

    func testABadDurationNamesTheOptionAndTheValue() {
        let bad: [(String, String)] = [
            ("--lease", "forever"), ("--lease", "0"), ("--lease", "-5m"), ("--lease", "9000h"), ("--lease", "5 m"),
            ("--lease", "367d"), ("--lease", "nan"), ("--heartbeat", "0x10"), ("--heartbeat", "1e1"), ("--heartbeat", "+10"),
            ("--heartbeat", ".5"), ("--heartbeat", "5."), ("--heartbeat", "10sec"), ("--heartbeat", "١٠"), ("--lease", "inf"), ("--heartbeat", "soon"), ("--hook-timeout", "0s"),
            ("--hook-timeout", "none"), ("--stop-grace", "-1"), ("--resume-grace", "ms"),
        ]
        let floors = ["--lease": "10s", "--heartbeat": "1s", "--hook-timeout": "100ms", "--stop-grace": "0",
                      "--resume-grace": "1s"]
        for (option, value) in bad {
            let text = usageError([option, value])
            XCTAssertEqual(text, "\(option) takes a duration from \(floors[option]!) to 366d \(Self.units), "
                           + "such as 30, 90s, 5m or 1h, not '\(value)'")
            XCTAssertEqual(usageError([option + "=" + value]), text)
        }
    }

    func testADurationBelowItsFloorIsRefusedAndTheFloorItselfIsAccepted() throws {
        let floors: [(option: String, below: String, floor: String, seconds: Double)] = [
            ("--lease", "9s", "10s", 10), ("--lease", "250ms", "10", 10), ("--heartbeat", "0.000001s", "1s", 1),
            ("--heartbeat", "999ms", "1", 1), ("--hook-timeout", "99ms", "0.1", 0.1),
            ("--resume-grace", "0.5", "1s", 1),
        ]
        for (option, below, floor, seconds) in floors {
            let text = usageError([option, below])
            XCTAssertTrue(text.hasPrefix("\(option) takes a duration from "), text)
            XCTAssertTrue(text.hasSuffix("not '\(below)'"), text)
            let parsed = try parse([option, floor])
            let value = option == "--lease" ? parsed.lease : option == "--heartbeat" ? parsed.heartbeat
                : option == "--hook-timeout" ? parsed.hookTimeout : parsed.resumeGrace
            XCTAssertEqual(value, seconds, "\(option) \(floor)")
        }
        XCTAssertEqual(try parse(["--stop-grace", "0"]).stopGrace, 0, "no grace at all is a choice")
    }

    func testAnErrorQuotesAtMostAHundredBytesOfTheBadInput() throws {
        let huge = String(repeating: "x", count: 3_000_000)
        let text = usageError(["--lease", huge])
        XCTAssertLessThan(text.utf8.count, 300, "the error is one short line")
        XCTAssertTrue(text.hasSuffix("…' (3000000 bytes)"), String(text.suffix(40)))
        let path = try config("lease = \(String(repeating: "y", count: 500_000))\n")
        XCTAssertLessThan(usageError(["--config", path]).utf8.count, 400)
        XCTAssertLessThan(usageError([String(repeating: "--z", count: 100_000)]).utf8.count, 300)
    }

    func testQuietAndVerboseTogetherAreRefused() throws {
        XCTAssertEqual(usageError(["--quiet", "--verbose"]), "--quiet and --verbose contradict each other: give one")
        XCTAssertEqual(usageError(["-v", "-q"]), "-v and -q contradict each other: give one")
        XCTAssertEqual(try parse(["--quiet", "-q"]).verbosity, .quiet, "saying the same twice is fine")
        let path = try config("verbose = true\n")
        XCTAssertEqual(try parse(["--config", path, "--quiet"]).verbosity, .quiet, "a flag overrides the config file")
    }

    func testASettingGivenTwiceInTheConfigFileIsRefused() throws {
        let path = try config("lease = 1h\n# more\nlease = 2h\n")
        XCTAssertEqual(usageError(["--config", path]), "\(path):3: 'lease' is already set on line 1")
        let verbosity = try config("quiet = true\nverbose = true\n", name: "verbosity.conf")
        XCTAssertEqual(usageError(["--config", verbosity]), "\(verbosity):2: 'verbose' is already set on line 1")
        let hooks = try config("hook.incoming = /bin/true\nhook.incoming = /bin/echo ring\n", name: "hooks.conf")
        XCTAssertEqual(try parse(["--config", hooks]).hookCommands["incoming"]?.count, 2,
                       "an event may have several hooks")
    }

    func testADirectoryAsTheConfigFileAndAnEmptyOrRelativeStateDirectoryAreRefused() {
        XCTAssertEqual(usageError(["--config", directory]), "cannot read config file \(directory): not a regular file")
        XCTAssertEqual(usageError(["--state-dir", ""]), "--state-dir takes an absolute directory path, not ''")
        XCTAssertEqual(usageError(["--state-dir", "state"]), "--state-dir takes an absolute directory path, not 'state'")
    }

    func testABadBooleanInTheConfigFileNamesTheFileLineSettingAndValue() throws {
        let path = try config("# header\njson = maybe\n")
        XCTAssertEqual(usageError(["--config", path]), "\(path):2: --json takes true or false, not 'maybe'")
        for key in ["redact-numbers", "wakelock", "sleep-delay-lock", "quiet", "verbose"] {
            let other = try config("\(key) = 2\n")
            XCTAssertEqual(usageError(["--config", other]), "\(other):1: --\(key) takes true or false, not '2'")
        }
    }

    func testABadInhibitNamesTheOptionTheValueAndWhatIsKnown() {
        for value in ["sleep:forever", "block", "delay", "", "snooze", "none:block", "sleep:block:delay"] {
            let text = usageError(["--inhibit", value])
            assertNames(text, "--inhibit", "not '\(value)'", "handle-lid-switch", "block or delay")
        }
    }

    func testABadBusOrBackendNamesTheOptionAndTheValue() {
        XCTAssertEqual(usageError(["--bus", "nowhere"]),
                       "--bus takes system, session or a D-Bus address such as unix:path=/run/bus, not 'nowhere'")
        XCTAssertEqual(usageError(["--bus=unix:"]),
                       "--bus takes system, session or a D-Bus address such as unix:path=/run/bus, not 'unix:'")
        XCTAssertEqual(usageError(["--backend", "hayes"]), "--backend takes auto, modemmanager or ofono, not 'hayes'")
        XCTAssertEqual(usageError(["--backend", "ModemManager"]),
                       "--backend takes auto, modemmanager or ofono, not 'ModemManager'")
    }

    func testAnUnknownConfigKeyNamesTheFileLineAndKey() throws {
        let path = try config("json = true\n\ncolour = red\n")
        XCTAssertEqual(usageError(["--config", path]), "\(path):3: unknown setting 'colour'")
        let nested = try config("config = /etc/other.conf\n", name: "nested.conf")
        XCTAssertEqual(usageError(["--config", nested]), "\(nested):1: unknown setting 'config'")
    }

    func testAnUnknownHookEventNamesTheEventAndTheKnownOnes() throws {
        let path = try config("hook.ringing = /bin/true\n")
        XCTAssertEqual(usageError(["--config", path]),
                       "\(path):1: unknown hook event 'ringing' (one of incoming, dialing, connected, disconnected, "
                       + "missed, updated, screened, acted, run-started, run-stopped, run-expired)")
        let empty = try config("hook.missed =   \n", name: "empty.conf")
        XCTAssertEqual(usageError(["--config", empty]), "\(empty):1: hook.missed needs a command")
    }

    func testAConfigLineWithoutEqualsIsShownAsWritten() throws {
        let path = try config("json\n")
        XCTAssertEqual(usageError(["--config", path]), "\(path):1: expected KEY = VALUE, got 'json'")
    }

    func testAnInlineCommentIsPartOfTheValueAndTheErrorShowsIt() throws {
        let path = try config("lease = 4h # four hours\n")
        XCTAssertEqual(usageError(["--config", path]),
                       "\(path):1: --lease takes a duration from 10s to 366d \(Self.units), such as 30, 90s, 5m or 1h, "
                       + "not '4h # four hours'")
    }

    func testABadVerbosityNamesTheValue() throws {
        let path = try config("verbosity = loud\n")
        XCTAssertEqual(usageError(["--config", path]), "\(path):1: verbosity takes quiet, normal or verbose, not 'loud'")
    }

    func testAFlagGivenAValueIsRefused() {
        for flag in ["--json", "--redact-numbers", "--wakelock", "--sleep-delay-lock", "--quiet", "--verbose"] {
            XCTAssertEqual(usageError([flag + "=true"]), "\(flag) takes no value")
            XCTAssertEqual(usageError([flag + "="]), "\(flag) takes no value")
        }
    }

    func testRunWithoutACommandSaysHowToGiveOne() {
        XCTAssertEqual(usageError(["--run", "--"]), "--run needs a command: --run -- CMD ARGS…")
        XCTAssertEqual(usageError(["--json", "--run"]), "--run needs a value")
    }

    func testAStrayDoubleDashSaysWhereTheCommandGoes() {
        XCTAssertEqual(usageError(["--json", "--", "x"]),
                       "unexpected '--' (the run command goes after --run: --run -- CMD ARGS…)")
    }

    func testAMissingConfigFileNamesThePathAndWhy() {
        let path = directory + "/absent.conf"
        XCTAssertEqual(usageError(["--config", path]), "cannot read config file \(path): No such file or directory")
        XCTAssertEqual(usageError(["--json", "--config=" + path]),
                       "cannot read config file \(path): No such file or directory")
    }

    // MARK: What each subcommand takes

    /// Every option of `telwatch watch`, with a valid value where it takes one.
    private static let watchOptions: [(option: String, value: String?)] = [
        ("--backend", "ofono"), ("--bus", "session"), ("--json", nil), ("--inhibit", "none"), ("--hooks", "/h"),
        ("--hook-timeout", "5s"), ("--run", "cmd"), ("--stop-grace", "1"), ("--lease", "1h"), ("--heartbeat", "1m"),
        ("--wakelock", nil), ("--sleep-delay-lock", nil), ("--resume-grace", "10s"), ("--state-dir", "/s"),
        ("--redact-numbers", nil), ("--quiet", nil), ("-q", nil), ("--verbose", nil), ("-v", nil), ("--config", nil),
        ("--no-history", nil), ("--history-keep", "30d"), ("--no-api", nil), ("--api-bus", "session"),
    ]

    private func assertTakes(_ command: String, exactly accepted: Set<String>, configPath: String,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        for (option, value) in Self.watchOptions {
            let arguments = option == "--config" ? [option, configPath] : [option] + (value.map { [$0] } ?? [])
            if accepted.contains(option) {
                XCTAssertNoThrow(try parse(arguments, command: command, accepting: accepted),
                                 "\(command) \(arguments)", file: file, line: line)
            } else {
                XCTAssertEqual(usageError(arguments, command: command, accepting: accepted),
                               "\(command): unknown option '\(option)' (see telwatch \(command) --help)",
                               file: file, line: line)
            }
        }
    }

    func testStatusTakesOnlyWhatItsUsageLineNames() throws {
        XCTAssertEqual(StatusCommand.acceptedOptions, ["--json", "--bus", "--backend", "--state-dir", "--api-bus"])
        try assertTakes("status", exactly: StatusCommand.acceptedOptions, configPath: try config("json = true\n"))
        let options = try parse(["--json", "--bus=session", "--backend", "ofono", "--state-dir", "/s"],
                                command: "status", accepting: StatusCommand.acceptedOptions)
        XCTAssertTrue(options.json)
        XCTAssertEqual(options.bus, .session)
        XCTAssertEqual(options.backend, .ofono)
        XCTAssertEqual(options.stateDirectory, "/s")
    }

    func testStatusDoesNotReadAConfigFile() {
        XCTAssertEqual(usageError(["--config", directory + "/absent.conf"], command: "status",
                                  accepting: StatusCommand.acceptedOptions),
                       "status: unknown option '--config' (see telwatch status --help)")
    }

    func testDoctorTakesOnlyWhatItsUsageLineNamesAndReadsTheConfigFile() throws {
        XCTAssertEqual(DoctorCommand.acceptedOptions, ["--bus", "--backend", "--inhibit", "--hooks", "--state-dir",
                                                       "--sleep-delay-lock", "--no-history", "--config",
                                                       "--feedback", "--call-audio", "--notify", "--session-bus",
                                                       "--screening", "--user"])
        let path = try config("inhibit = sleep:delay\nhooks = /from/file\n")
        try assertTakes("doctor", exactly: DoctorCommand.acceptedOptions, configPath: path)
        let options = try parse(["--config", path, "--hooks", "/from/flag"], command: "doctor",
                                accepting: DoctorCommand.acceptedOptions)
        XCTAssertEqual(options.inhibitMode, "delay")
        XCTAssertEqual(options.hooksDirectory, "/from/flag")
    }

    func testLogTakesOnlyWhatItsUsageLineNamesAndItsOwnFilters() throws {
        XCTAssertEqual(LogCommand.acceptedOptions, ["--json", "--redact-numbers", "--state-dir", "--config", "--missed",
                                                    "--unseen", "--screened", "--since", "--number", "--limit", "--csv", "--mark-seen",
                                                    "--bus", "--api-bus"])
        try assertTakes("log", exactly: LogCommand.acceptedOptions, configPath: try config("state-dir = /from/file\n"))
    }

    func testLogSinceTakesADurationOrALocalDate() throws {
        let now = 1_780_000_000.0
        XCTAssertEqual(try Parse.since("2h", now: now), now - 7200)
        XCTAssertEqual(try Parse.since("7d", now: now), now - 7 * 86_400)
        XCTAssertEqual(try Parse.since("1w", now: now), now - 7 * 86_400)
        XCTAssertEqual(try Parse.since("90m", now: now), now - 5400)
        XCTAssertEqual(try Parse.since("2026-05-31T10:11:12Z", now: now), 1_780_222_272)
        XCTAssertEqual(try Parse.since("2026-05-31Z", now: now), 1_780_185_600)
        // Local times: whatever the zone, a date is its midnight and a time is on that day.
        let midnight = try Parse.since("2026-05-31", now: now)
        XCTAssertEqual(try Parse.since("2026-05-31 08:30", now: now), midnight + 8.5 * 3600)
        XCTAssertEqual(try Parse.since("2026-05-31T08:30:15", now: now), midnight + 8.5 * 3600 + 15)
        for bad in ["yesterday", "2h ago", "2026-13-01", "2026-05-31 25:00", "31/05/2026", "", "-2h"] {
            XCTAssertThrowsError(try Parse.since(bad, now: now), bad)
        }
        XCTAssertEqual(try Parse.limit("20"), 20)
        for bad in ["0", "-1", "ten", ""] { XCTAssertThrowsError(try Parse.limit(bad), bad) }
    }

    func testDemoTakesOnlyWhatItsUsageLineNames() throws {
        XCTAssertEqual(DemoCommand.acceptedOptions, ["--json", "--redact-numbers", "--verbose", "-v", "--hooks",
                                                     "--hook-timeout", "--feedback", "--call-audio", "--notify",
                                                     "--speed"])
        try assertTakes("demo", exactly: DemoCommand.acceptedOptions, configPath: try config("json = true\n"))
    }

    func testASubcommandStillSaysWhatIsWrongWithAnOptionItTakes() {
        XCTAssertEqual(usageError(["--backend", "hayes"], command: "status", accepting: StatusCommand.acceptedOptions),
                       "--backend takes auto, modemmanager or ofono, not 'hayes'")
        XCTAssertEqual(usageError(["--json=1"], command: "demo", accepting: DemoCommand.acceptedOptions),
                       "--json takes no value")
        XCTAssertEqual(usageError(["--hooks"], command: "doctor", accepting: DoctorCommand.acceptedOptions),
                       "--hooks needs a value")
    }
}
