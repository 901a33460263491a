import TestSupport
import XCTest
@testable import telwatch

/// `--help` and telwatch(1) list the watch options by sink, as the sink table names their groups:
/// a user looking for MQTT's options finds them all under one heading, where MQTT comes in the
/// pipeline, and a new sink option that lands elsewhere fails here.
final class OptionGroupTests: XCTestCase {
    /// The settings each sink is made from, as `WatchOptions`' stored properties: an option that
    /// sets one of them is that sink's option. (`stop-grace` is the runs', though the call-scoped
    /// commands share it: it is the run command's first.)
    private static let madeFrom: [String: Set<String>] = [
        "OutputSink": ["json", "verbosity", "redactNumbers"],
        "TelManager": ["inhibitWhat", "inhibitMode", "runCommand", "lease", "heartbeat", "stopGrace", "wakelock",
                       "sleepDelayLock", "resumeGrace"],
        "PhoneActions": ["actions"],
        "ScopedCommandSink": ["whileCommands"],
        "MonitorAPI": ["api", "apiBus"],
        "CallHookSink": ["hooksDirectory", "hookCommands", "hookTimeout"],
        "MQTTSink": ["mqtt"],
        "HistorySink": ["history", "historyKeep"],
    ]

    /// Each stored property of `options`, as text, to tell which ones a setting changed.
    private func properties(_ options: WatchOptions) -> [String: String] {
        Dictionary(uniqueKeysWithValues: Mirror(reflecting: options).children.compactMap { child in
            child.label.map { ($0, String(describing: child.value)) }
        })
    }

    /// The properties a config key sets: the first sample value the parser takes that changes
    /// anything (a flag's default may already be the first value tried).
    private func propertiesSet(by spec: OptionSpec) throws -> Set<String> {
        let key = try XCTUnwrap(spec.key)
        let name = key == "hook.EVENT" ? "hook.missed" : key == "while.SCOPE" ? "while.ringing" : key
        var samples = ["true", "false", "17s", "17", "4096", "/var/tmp/telwatch-sample", "mqtt://broker.invalid",
                       "sample words", "sleep:delay", "30d", "unix:path=/run/sample-bus"]
        if case .words(let words) = spec.kind { samples = words.reversed() + samples }
        let before = properties(WatchOptions())
        for value in samples {
            var options = WatchOptions()
            guard (try? options.set(name, value)) != nil else { continue }
            let changed = Set(properties(options).filter { before[$0.key] != $0.value }.keys)
            if !changed.isEmpty { return changed }
        }
        XCTFail("no sample value of \(key) changes the watch options")
        return []
    }

    func testEveryOptionOfASinkIsInItsSinksGroup() throws {
        let groups = Dictionary(uniqueKeysWithValues: WatchSinks.table.compactMap { row in
            row.options.map { (row.name, $0) }
        })
        XCTAssertEqual(Set(groups.keys), Set(Self.madeFrom.keys), "the sinks whose rows name an option group")
        XCTAssertEqual(Set(groups.values).count, groups.count, "one group a sink: \(groups)")
        for spec in OptionTable.settings {
            let set = try propertiesSet(by: spec)
            let owners = Self.madeFrom.filter { !$0.value.isDisjoint(with: set) }.keys
            XCTAssertLessThanOrEqual(owners.count, 1, "\(spec.key ?? "") sets \(set), which several sinks are made from")
            if let owner = owners.first {
                XCTAssertEqual(spec.group, groups[owner], "\(spec.key ?? "") configures \(owner): its row's group")
            } else {
                XCTAssertFalse(Set(groups.values).contains(spec.group),
                               "\(spec.key ?? "") configures no sink, yet is listed in a sink's group, \(spec.group)")
            }
        }
    }

    /// The options `--help` lists under each heading, in order.
    private func helpSections() -> [(heading: String, flags: [String])] {
        let start = Help.main.range(of: "\n\n", range: Help.main.range(of: "commands:\n")!.upperBound..<Help.main.endIndex)!
        let end = Help.main.range(of: "\nDURATION:")!
        return Help.main[start.upperBound..<end.lowerBound].components(separatedBy: "\n\n").map { section in
            let lines = section.split(separator: "\n")
            let flags = lines.dropFirst().filter { $0.hasPrefix("  --") }
                .map { String($0.dropFirst(2).prefix { $0 != " " && $0 != "," }) }
            return (String(lines[0]), flags)
        }
    }

    func testHelpListsTheWatchOptionsByGroupInTheSinkTablesOrder() throws {
        let sections = helpSections()
        let sinkGroups = WatchSinks.table.compactMap(\.options)
        let expected = [OptionGroup.general, .screening] + sinkGroups
        XCTAssertEqual(sections.map(\.heading), expected.map { $0.title + ":" }, Help.main)
        for (section, group) in zip(sections, expected) {
            let flags = OptionTable.options(for: .watch).filter { $0.group == group }.compactMap(\.flag)
            XCTAssertEqual(section.flags, flags, section.heading)
        }
        XCTAssertEqual(sections.flatMap(\.flags).count, OptionTable.options(for: .watch).count,
                       "every watch option is listed once")
        let mqtt = try XCTUnwrap(sections.first { $0.heading == "MQTT export options:" })
        XCTAssertTrue(mqtt.flags.contains("--mqtt-outbox-limit") && mqtt.flags.contains("--mqtt"), "\(mqtt.flags)")
    }

    /// The committed page, which `ReferenceTests` holds to be what the binary generates.
    func testTheManPageHasOneSubsectionAGroupInTheSameOrder() throws {
        let page = try XCTUnwrap(Files.text(Repository.path("dist/man/telwatch.1")))
        let options = try XCTUnwrap(page.components(separatedBy: ".SH OPTIONS\n").last?
            .components(separatedBy: ".SH EXIT STATUS").first)
        let headings = options.split(separator: "\n").filter { $0.hasPrefix(".SS ") }.map { $0.dropFirst(4).lowercased() }
        let expected = OptionGroup.listed.filter { group in OptionTable.options.contains { $0.group == group && $0.flag != nil } }
        XCTAssertEqual(headings, expected.map { ManPage.escape($0.title).lowercased() })
    }
}
