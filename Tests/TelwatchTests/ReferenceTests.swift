import Foundation
import Glibc
import Loop
import TestSupport
import XCTest
@testable import telwatch

/// The man pages and completions are made from the option table by the binary, committed under
/// dist/, and list exactly what the parser takes.
final class ReferenceTests: XCTestCase {
    var fixture: BusFixture!

    override func setUpWithError() throws { fixture = try BusFixture() }
    override func tearDown() {
        fixture?.stop()
        fixture = nil
    }

    static let generated: [(kind: String, path: String)] = [
        ("man1", "dist/man/telwatch.1"), ("man5", "dist/man/telwatch.conf.5"),
        ("bash", "dist/completions/telwatch.bash"), ("zsh", "dist/completions/_telwatch"),
        ("fish", "dist/completions/telwatch.fish"),
    ]

    func generate(_ kind: String) throws -> String {
        let result = try fixture.run([BuildProducts.path("telwatch"), "--generate", kind])
        XCTAssertEqual(result.status, .exited(0), result.log)
        return result.output
    }

    func testTheCommittedManPagesAndCompletionsAreWhatTheBinaryGenerates() throws {
        for (kind, path) in Self.generated {
            let committed = Files.text(Repository.path(path))
            XCTAssertEqual(committed, try generate(kind),
                           "\(path) drifted from the option table: run telwatch --generate \(kind) > \(path)")
        }
        let refused = try fixture.run([BuildProducts.path("telwatch"), "--generate", "html"])
        XCTAssertEqual(refused.status, .exited(2))
        XCTAssertTrue(refused.log.contains("--generate takes one of man1, man5, bash, zsh, fish"), refused.log)
    }

    /// Every flag in the table is taken by its commands' parsers and refused as unknown by the
    /// others': a bad value (`=@@`) or `--help` ends each run before it does anything.
    func testTheParserTakesExactlyTheTablesOptions() throws {
        let every = Set(OptionTable.options.flatMap(\.names))
        for command in TelwatchCommand.allCases {
            let accepted = OptionTable.accepted(by: command)
            for name in every.sorted() {
                let argument = name.hasPrefix("--") ? name + "=@@" : name
                let result = try fixture.run([BuildProducts.path("telwatch"), command.rawValue, argument, "--help"])
                XCTAssertNotNil(result.status, "telwatch \(command) \(argument) did not end")
                let unknown = result.log.contains("unknown option")
                XCTAssertEqual(unknown, !accepted.contains(name),
                               "telwatch \(command) \(argument): \(result.log)")
            }
        }
    }

    /// The options each generated text lists for `command`, found by `pattern`'s first group
    /// within the command's block.
    private func names(in text: Substring, matching pattern: String) throws -> Set<String> {
        let regex = try NSRegularExpression(pattern: pattern)
        let string = String(text)
        return Set(regex.matches(in: string, range: NSRange(string.startIndex..., in: string)).compactMap {
            Range($0.range(at: 1), in: string).map { String(string[$0]) }
        })
    }

    private func block(_ text: String, from start: String, to end: String) -> Substring {
        guard let from = text.range(of: start) else { return "" }
        let rest = text[from.upperBound...]
        return rest[..<(rest.range(of: end)?.lowerBound ?? rest.endIndex)]
    }

    func testTheManPageAndCompletionsListExactlyTheParsersOptions() throws {
        let man = try generate("man1")
        let bash = try generate("bash")
        let zsh = try generate("zsh")
        let fish = try generate("fish")
        for command in TelwatchCommand.allCases {
            let name = command.rawValue
            let parser = OptionTable.accepted(by: command)
            let longs = Set(parser.filter { $0.hasPrefix("--") })
            let entry = block(man, from: ".TP\n\\fB\(name)\\fR\n", to: "\n.TP")
            XCTAssertEqual(try names(in: entry, matching: #"\\fB(\\-(?:\\-|[a-z])+)\\fR"#)
                            .map { $0.replacingOccurrences(of: "\\-", with: "-") }.sorted(), longs.sorted(),
                           "telwatch(1), \(name)")
            let bashLine = block(bash, from: "        \(name)) options=\"", to: "\"")
            XCTAssertEqual(Set(bashLine.split(separator: " ").map(String.init)), parser.union(["--help"]), "bash, \(name)")
            let zshBlock = block(zsh, from: "        \(name))\n", to: ";;")
            XCTAssertEqual(try names(in: zshBlock, matching: #"'(-[-a-z]+)\["#), parser.union(["--help"]), "zsh, \(name)")
            let condition = command == .watch ? "'not __fish_seen_subcommand_from" : "'__fish_seen_subcommand_from \(name)'"
            let fishLines = fish.split(separator: "\n").filter { $0.contains(condition) }.joined(separator: "\n")
            XCTAssertEqual(try names(in: Substring(fishLines), matching: #" -l ([a-z-]+)"#).map { "--" + $0 }.sorted(),
                           longs.union(["--help"]).sorted(), "fish, \(name)")
        }
        XCTAssertTrue(man.contains(".SH EXIT STATUS"))
        for status in ManualFacts.exitStatuses { XCTAssertTrue(man.contains("\\fB\(status.code)\\fR"), "exit \(status.code)") }
    }

    /// The completions as the shells themselves load and run them: bash offers a command's options
    /// and an option's values, zsh's function hands `_arguments` the command's options, fish
    /// completes values and commands. groff reads both pages without a warning.
    func testTheCompletionsAndManPagesLoadInTheRealShellsAndGroff() throws {
        let bash = Repository.path("dist/completions/telwatch.bash")
        let options = try fixture.run(["bash", "-c", "source \(bash); COMP_WORDS=(telwatch status --); COMP_CWORD=2; "
                                       + "_telwatch; echo \"${COMPREPLY[*]}\""])
        XCTAssertEqual(Set(options.output.split(whereSeparator: \.isWhitespace).map(String.init)),
                       OptionTable.accepted(by: .status).union(["--help"]), options.log)
        let values = try fixture.run(["bash", "-c", "source \(bash); COMP_WORDS=(telwatch doctor --backend o); "
                                      + "COMP_CWORD=3; _telwatch; echo \"${COMPREPLY[*]}\""])
        XCTAssertEqual(values.output, "ofono\n", values.log)

        let zsh = try fixture.run(["zsh", "-c", "words=(telwatch log --); CURRENT=3; "
                                   + "_arguments() { print -l -- \"$@\" }; _describe() { print describe }; "
                                   + "source " + Repository.path("dist/completions/_telwatch")])
        XCTAssertEqual(zsh.status, .exited(0), zsh.log)
        XCTAssertTrue(zsh.output.contains("--mark-seen[mark the missed calls listed as seen]\n"), zsh.output)
        XCTAssertFalse(zsh.output.contains("--backend"), "log takes no --backend: \(zsh.output)")

        let fish = try fixture.run(["fish", "-c", "source " + Repository.path("dist/completions/telwatch.fish")
                                    + "; complete -C 'telwatch --api-bus '; complete -C 'telwatch sim'"])
        XCTAssertEqual(fish.output.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) },
                       ["session", "system", "simulate"], fish.log)

        for page in ["dist/man/telwatch.1", "dist/man/telwatch.conf.5"] {
            let groff = try fixture.run(["groff", "-man", "-ww", "-z", Repository.path(page)])
            XCTAssertEqual(groff.status, .exited(0), groff.log)
            XCTAssertEqual(groff.log, "", "groff warns about \(page)")
        }
    }

    /// telwatch(1) lists exactly the `TELWATCH_*` variables the sources give hooks, call-scoped
    /// commands and the run command.
    func testTheManPageListsEveryHookVariableTheSourcesSet() throws {
        let regex = try NSRegularExpression(pattern: #""(TELWATCH_[A-Z_]*[A-Z])""#)
        var used: Set<String> = []
        for directory in ["Sources/Pipeline", "Sources/BGRunManager"] {
            let path = Repository.path(directory)
            for file in try FileManager.default.contentsOfDirectory(atPath: path) where file.hasSuffix(".swift") {
                let text = try XCTUnwrap(Files.text(path + "/" + file))
                for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    if let range = Range(match.range(at: 1), in: text) { used.insert(String(text[range])) }
                }
            }
        }
        XCTAssertTrue(used.contains("TELWATCH_CALL_ID") && used.contains("TELWATCH_RUN_HOLDERS"), "\(used)")
        XCTAssertEqual(Set(ManualFacts.hookVariables.map(\.name)), used)
        let man = try generate("man1")
        for name in used { XCTAssertTrue(man.contains("\\fB" + name.replacingOccurrences(of: "-", with: "\\-") + "\\fR"), name) }
    }

    /// A value for each setting that differs from its default, so a reload can be tried with it.
    static let samples: [String: String] = [
        "backend": "ofono", "bus": "session", "json": "true", "inhibit": "none", "hooks": "/h",
        "hook.EVENT": "logger missed", "hook-timeout": "5s", "while.SCOPE": "sleep 1", "contacts": "/c.vcf", "screening": "/s.conf",
        "run": "sleep 1", "stop-grace": "1", "lease": "1h", "heartbeat": "1m", "wakelock": "true",
        "sleep-delay-lock": "true", "resume-grace": "10s", "state-dir": "/s", "history": "false",
        "history-keep": "30d", "feedback": "true", "call-audio": "true", "notify": "true",
        "session-bus": "unix:path=/x", "redact-numbers": "true", "api": "false", "api-bus": "session",
        "mqtt": "mqtt://h", "mqtt-topic": "t", "mqtt-credentials": "/c", "mqtt-ca": "/a", "mqtt-cert": "/b",
        "mqtt-key": "/k", "mqtt-user": "u", "mqtt-password": "p", "mqtt-keepalive": "30s",
        "mqtt-reconnect-max": "5s", "mqtt-outbox-limit": "100", "mqtt-outbox-max-age": "1h",
        "mqtt-max-message": "2048", "mqtt-homeassistant": "false", "mqtt-commands": "true", "mqtt-discovery-prefix": "ha",
        "verbosity": "quiet", "quiet": "true", "verbose": "true",
    ]

    /// What telwatch.conf(5) says of each setting (reloaded on SIGHUP, or at the next start) is
    /// what a running telwatch does with a new value of it.
    func testTheManPagesReloadOrRestartIsWhatSIGHUPDoes() throws {
        let before = WatchOptions()
        for spec in OptionTable.settings {
            let key = try XCTUnwrap(spec.key)
            let sample = try XCTUnwrap(Self.samples[key], "no sample value for \(key): add one")
            var after = before
            let concrete = key.replacingOccurrences(of: "EVENT", with: "missed").replacingOccurrences(of: "SCOPE", with: "live")
            try after.set(concrete, sample)
            let waiting = before.settingsNeedingARestart(comparedWith: after)
            XCTAssertEqual(waiting.isEmpty, spec.change == .reload, "\(key): SIGHUP leaves \(waiting) for the next start")
        }
    }

    /// Every key telwatch.conf(5) names is a setting the config file takes.
    func testEveryConfigKeyOfTheManPageIsASetting() throws {
        let conf = try generate("man5")
        var options = WatchOptions()
        for spec in OptionTable.settings {
            let key = try XCTUnwrap(spec.key)
            XCTAssertTrue(conf.contains(".TP\n\\fB\(key.replacingOccurrences(of: "-", with: "\\-"))\\fR = "), key)
            let concrete = key.replacingOccurrences(of: "EVENT", with: "missed").replacingOccurrences(of: "SCOPE", with: "live")
            do { try options.set(concrete, "@@") } catch let error as UsageError {
                XCTAssertFalse(error.description.hasPrefix("unknown setting"), "\(key): \(error)")
            }
        }
    }
}
