import Pipeline
import TestSupport
import XCTest
@testable import telwatch

/// Command lines of the config file split as `sh` splits words, with nothing expanded and no
/// shell: what a user who quotes as in a terminal expects, and nothing more.
final class CommandWordsTests: XCTestCase {
    private func words(_ line: String, file: StaticString = #filePath, at number: UInt = #line) -> [String] {
        do { return try CommandWords.split(line) } catch {
            XCTFail("\(line.debugDescription) refused: \(error)", file: file, line: number)
            return []
        }
    }

    func testSpacesAndTabsSeparateWordsAndRunsOfThemAreOne() {
        XCTAssertEqual(words("fbcli  -E\tphone-incoming-call   -t 30 "), ["fbcli", "-E", "phone-incoming-call", "-t", "30"])
        XCTAssertEqual(words(""), [])
        XCTAssertEqual(words(" \t "), [])
    }

    func testQuotesKeepSpacesAndJoinWithWhatTouchesThem() {
        XCTAssertEqual(words(#"notify-send "Missed call" 'from  them'"#), ["notify-send", "Missed call", "from  them"])
        XCTAssertEqual(words(#"a"b c"'d e'f"#), ["ab cd ef"])
        XCTAssertEqual(words(#"'it''s'"#), ["its"])
        XCTAssertEqual(words(#"x '' "" y"#), ["x", "", "", "y"], "empty quotes are empty words")
    }

    func testSingleQuotesKeepEverythingIncludingBackslashes() {
        XCTAssertEqual(words(#"'a\b "c" $d'"#), [#"a\b "c" $d"#])
    }

    func testInDoubleQuotesABackslashEscapesOnlyWhatShWouldEscape() {
        XCTAssertEqual(words(#""say \"hi\" \\ \$HOME \` \n""#), [#"say "hi" \ $HOME ` \n"#])
    }

    func testOutsideQuotesABackslashMakesTheNextCharacterItself() {
        XCTAssertEqual(words(#"a\ b \'c \"d \\e \x"#), ["a b", "'c", "\"d", "\\e", "x"])
    }

    func testNothingIsExpandedOrInterpreted() {
        XCTAssertEqual(words("echo $HOME ~ *.wav ; rm -rf / | cat $(id) `id` > out"),
                       ["echo", "$HOME", "~", "*.wav", ";", "rm", "-rf", "/", "|", "cat", "$(id)", "`id`", ">", "out"])
    }

    func testUnicodeAndHashesAreWordCharacters() {
        XCTAssertEqual(words("notify \"Anruf von Jürgen\" #tag"), ["notify", "Anruf von Jürgen", "#tag"])
    }

    func testAnUnclosedQuoteOrADanglingBackslashIsRefused() {
        XCTAssertThrowsError(try CommandWords.split(#"echo 'open"#)) {
            XCTAssertEqual($0 as? CommandWords.Failure, .unterminatedSingleQuote)
        }
        XCTAssertThrowsError(try CommandWords.split(#"echo "open 'x'"#)) {
            XCTAssertEqual($0 as? CommandWords.Failure, .unterminatedDoubleQuote)
        }
        XCTAssertThrowsError(try CommandWords.split(#"echo \"#)) {
            XCTAssertEqual($0 as? CommandWords.Failure, .trailingBackslash)
        }
    }

    // MARK: In the config file and on the command line

    /// The options, or the `UsageError` they throw (not wrapped: the tests compare its text).
    private func options(_ arguments: [String]) throws -> WatchOptions {
        guard let parsed = try WatchArguments.parse(arguments) else { throw UsageError("asked for help") }
        return parsed
    }

    private func configFile(_ text: String) throws -> (path: String, remove: () -> Void) {
        let scratch = try ScratchDirectory(prefix: "telwatch-words")
        let path = scratch.path + "/telwatch.conf"
        try Files.write(path, text)
        return (path, { scratch.remove() })
    }

    func testHookWhileAndRunLinesAreSplitWithQuotes() throws {
        let file = try configFile("""
        hook.missed = notify-send "Missed call" 'from "$TELWATCH_NUMBER"'
        while.ringing = fbcli -E phone-incoming-call -t 60
        while.ringing = /usr/bin/vibrate "long pattern"
        while.live = /bin/sh -c 'exec pw-play ~/keepalive.wav'
        run = pw-play "/home/me/Keep Alive.wav"
        """)
        defer { file.remove() }
        let parsed = try options(["--config", file.path])
        XCTAssertEqual(parsed.hookCommands["missed"], [["notify-send", "Missed call", #"from "$TELWATCH_NUMBER""#]])
        XCTAssertEqual(parsed.whileCommands, [
            ScopedCommand(scope: .ringing, arguments: ["fbcli", "-E", "phone-incoming-call", "-t", "60"]),
            ScopedCommand(scope: .ringing, arguments: ["/usr/bin/vibrate", "long pattern"]),
            ScopedCommand(scope: .live, arguments: ["/bin/sh", "-c", "exec pw-play ~/keepalive.wav"]),
        ], "a scope may have several commands, in order")
        XCTAssertEqual(parsed.runCommand, ["pw-play", "/home/me/Keep Alive.wav"])
    }

    func testTheWhileFlagTakesScopeEqualsCommandAndMayRepeat() throws {
        let parsed = try options(["--while", "ringing=fbcli -E 'phone-incoming-call'", "--while=held=hold-music --loop",
                                  "--contacts", "/home/me/contacts.vcf"])
        XCTAssertEqual(parsed.whileCommands, [
            ScopedCommand(scope: .ringing, arguments: ["fbcli", "-E", "phone-incoming-call"]),
            ScopedCommand(scope: .held, arguments: ["hold-music", "--loop"]),
        ])
        XCTAssertEqual(parsed.contactsFile, "/home/me/contacts.vcf")
    }

    func testAnUnclosedQuoteNamesTheFileLineAndSetting() throws {
        let file = try configFile("json = true\nhook.missed = notify-send \"Missed call\n")
        defer { file.remove() }
        XCTAssertThrowsError(try options(["--config", file.path])) {
            XCTAssertEqual(($0 as? UsageError)?.description, "\(file.path):2: hook.missed: a \" quote is not closed")
        }
    }

    func testABadScopeOrAWhileWithoutACommandIsOneClearLine() throws {
        XCTAssertThrowsError(try options(["--while", "ringing"])) {
            XCTAssertEqual(($0 as? UsageError)?.description, "--while takes SCOPE=COMMAND ARGS…, such as "
                           + "'ringing=fbcli -E phone-incoming-call', not 'ringing'")
        }
        XCTAssertThrowsError(try options(["--while", "ringin=fbcli"])) {
            XCTAssertEqual(($0 as? UsageError)?.description, "unknown call scope 'ringin' (one of ringing, waiting, "
                           + "dialing, alerting, active, held, live)")
        }
        XCTAssertThrowsError(try options(["--while", "live= ''"])) {
            XCTAssertEqual(($0 as? UsageError)?.description, "while.live needs a command")
        }
    }
}
