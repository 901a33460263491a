import Loop
import Pipeline
import XCTest

/// The rules file, the list files, and the pure decision (docs/screening.md), with an injected clock.
final class ScreeningRulesTests: XCTestCase {
    private func rules(_ text: String, lists: [String: String] = [:],
                       file: StaticString = #filePath, line: UInt = #line) -> ScreeningRules {
        do {
            return try ScreeningRules.parse(Array(text.utf8), path: "/etc/telwatch/screening.conf") { path in
                guard let list = lists[path] else { throw ScreeningFileError(file: path, "no such file") }
                return Array(list.utf8)
            }
        } catch {
            XCTFail("refused: \(error)", file: file, line: line)
            return ScreeningRules()
        }
    }

    private func refusal(_ text: String, lists: [String: [UInt8]] = [:]) -> String? {
        do {
            _ = try ScreeningRules.parse(Array(text.utf8), path: "/r.conf") { path in
                guard let list = lists[path] else { throw ScreeningFileError(file: path, "no such file") }
                return list
            }
            return nil
        } catch { return error.description }
    }

    /// Wednesday noon, local.
    private let noon = LocalTime(weekday: 3, minute: 12 * 60)
    private let now = 1_800_000_000.0

    private func decide(_ rules: ScreeningRules, _ number: String, _ facts: ScreeningFacts = ScreeningFacts(),
                        at local: LocalTime? = nil) -> ScreeningDecision? {
        rules.decide(number: number, facts: facts, now: now, local: local ?? noon)
    }

    // MARK: Numbers

    func testBlockedNumbersMatchNationalAndInternationalFormsAndPrefixes() {
        let screening = rules("block +49-171-1234567 +1900*\nblock silence 0800*\n")
        for number in ["+491711234567", "01711234567", "00491711234567"] {
            XCTAssertEqual(decide(screening, number)?.action, .reject, number)
        }
        XCTAssertEqual(decide(screening, "+19005550100")?.action, .reject)
        XCTAssertEqual(decide(screening, "0019005550100")?.action, .reject, "00 is +")
        XCTAssertEqual(decide(screening, "08001234567")?.action, .silence)
        XCTAssertNil(decide(screening, "+491711234568"))
        XCTAssertNil(decide(screening, "+12125550100"))
        XCTAssertEqual(decide(screening, "+491711234567")?.ruleText, "block (/etc/telwatch/screening.conf:1)")
    }

    func testAllowBeatsBlockAndContactsBeatBlockOnlyWhenExcepted() {
        let screening = rules("block +1900*\nallow +19005550100\n")
        XCTAssertEqual(decide(screening, "+19005550100"), ScreeningDecision(action: .allow, rule: .allow,
                                                                           source: "/etc/telwatch/screening.conf:2"))
        XCTAssertEqual(decide(screening, "+19005550101")?.action, .reject)
        let contact = ScreeningFacts(isContact: true)
        XCTAssertEqual(decide(screening, "+19005550101", contact)?.action, .reject, "no except contacts")
        let excepting = rules("block +1900*\nexcept contacts\n")
        XCTAssertEqual(decide(excepting, "+19005550101", contact), ScreeningDecision(action: .allow, rule: .contact))
    }

    func testListFilesAreReadRelativeToTheRulesFile() {
        let screening = rules("block-list spam.txt\nblock-list ignore /lists/quiet.txt\nallow-list friends.txt\n", lists: [
            "/etc/telwatch/spam.txt": "# a public list\n+44 20 7946 0000\r\n\n  +1900*  \n",
            "/lists/quiet.txt": "0301234567\n",
            "/etc/telwatch/friends.txt": "+442079460000\n",
        ])
        XCTAssertEqual(screening.numberCount, 4)
        XCTAssertEqual(decide(screening, "+19001234567"),
                       ScreeningDecision(action: .reject, rule: .block, source: "/etc/telwatch/spam.txt"))
        XCTAssertEqual(decide(screening, "+49301234567")?.action, .ignore)
        XCTAssertEqual(decide(screening, "02079460000")?.rule, .allow)
    }

    func testHostileListEntriesAreRefusedWithTheirLine() {
        let huge = Array("+1".utf8) + [UInt8](repeating: UInt8(ascii: "5"), count: 1 << 20) + [10]
        XCTAssertEqual(refusal("block-list /l.txt\n", lists: ["/l.txt": Array("+1555\n".utf8) + huge]),
                       "/l.txt:2: a line of 1048578 bytes (at most 64)")
        XCTAssertEqual(refusal("block-list /l.txt\n", lists: ["/l.txt": Array("+1555\n\n+1\u{1b}[2J555\n".utf8)]),
                       "/l.txt:3: a control character (0x1b)")
        XCTAssertEqual(refusal("block-list /l.txt\n", lists: ["/l.txt": Array("+1555\n$(reboot)\n".utf8)]),
                       "/l.txt:2: not a number or a prefix (digits, then * for a prefix)")
        XCTAssertEqual(refusal("block-list /missing.txt\n"),
                       "/r.conf:1: cannot read the list /missing.txt: /missing.txt: no such file")
        XCTAssertEqual(refusal("block +1*55\n"),
                       "/r.conf:1: '+1*55' is not a number or a prefix (digits, then * for a prefix)")
        XCTAssertEqual(refusal("\nblock allow +1\n"), "/r.conf:2: a block rule's action is reject, silence, ignore, deflect NUMBER or run NAME")
        XCTAssertEqual(refusal("reject-all\n")?.hasPrefix("/r.conf:1: unknown rule 'reject-all'"), true)
        XCTAssertEqual(refusal("quiet 25:00-07:00\n")?.hasPrefix("/r.conf:1: quiet takes"), true)
        XCTAssertEqual(refusal("except repeat 15\n"), "/r.conf:1: except repeat takes a duration from 1m to 24h (digits, "
                       + "a fraction allowed, then m or h), such as 15m, not '15'")
    }

    /// The exceptions' windows are durations as every setting's are, and a refusal says the range and units.
    func testTheExceptionWindowsTakeDurationsAndSayTheirRange() {
        XCTAssertEqual(rules("except repeat 2h\nexcept called 2w\n").repeatWindow, 7200)
        XCTAssertEqual(rules("except repeat 1.5m\nexcept called 12h\n").calledWindow, 12 * 3600)
        XCTAssertEqual(rules("except called 30d\n").calledWindow, 30 * 86_400)
        for bad in ["0m", "99999d", "25h", "1e1m", "0x10m", "+5m", "30s"] {
            XCTAssertEqual(refusal("except repeat \(bad)\n"), "/r.conf:1: except repeat takes a duration from 1m to 24h "
                           + "(digits, a fraction allowed, then m or h), such as 15m, not '\(bad)'")
        }
        for bad in ["0d", "99999d", "367d", "30m", "30"] {
            XCTAssertEqual(refusal("except called \(bad)\n"), "/r.conf:1: except called takes a duration from 1h to 366d "
                           + "(digits, a fraction allowed, then h, d or w), such as 30d, not '\(bad)'")
        }
    }

    /// `+*` was refused but `00*`, which is `+*` once `00` is read as `+`, matched every
    /// international caller: every form of a prefix that keeps no digit is refused alike.
    func testAPrefixThatMatchesEveryNumberIsRefusedInEveryForm() {
        let every = "a prefix that matches every number (00 is read as +): give at least a country code, such as +1900*"
        for prefix in ["+*", "00*", "0-0*", "(00)*", "*", "-*"] {
            XCTAssertEqual(refusal("block \(prefix)\n"), "/r.conf:1: '\(prefix)' is \(every)", prefix)
            XCTAssertEqual(refusal("allow-list /l.txt\n", lists: ["/l.txt": Array("+1555\n\(prefix)\n".utf8)]),
                           "/l.txt:2: \(every)", prefix)
            guard case .failure(let refused) = ScreeningRules.listEntry(Array(prefix.utf8)) else {
                XCTFail("\(prefix) taken by telwatch block")
                continue
            }
            XCTAssertEqual(refused.reason, every, prefix)
        }
        let screening = rules("block 001* 0*\n")
        XCTAssertEqual(decide(screening, "+12125550100")?.action, .reject, "001* is +1*")
        XCTAssertNil(decide(screening, "+442079460000"))
        XCTAssertEqual(decide(screening, "02079460000")?.action, .reject, "0*: national numbers only, still taken")
    }

    /// A UTF-8 byte-order mark (Windows' Notepad writes one) gave `unknown rule '?block'` and
    /// turned screening off.
    func testAByteOrderMarkAtTheStartIsNoPartOfTheFirstLine() {
        let bom = "\u{FEFF}"
        let screening = rules(bom + "block +1900*\nblock-list /l.txt\n", lists: ["/l.txt": bom + "+1555\n"])
        XCTAssertEqual(decide(screening, "+19005550100")?.action, .reject)
        XCTAssertEqual(decide(screening, "+1555")?.source, "/l.txt")
        XCTAssertEqual(refusal("block +1\n" + bom + "block +2\n")?.hasPrefix("/r.conf:2: unknown rule"), true,
                       "only at the start of the file")
    }

    /// How fast: bench/screening-bench (docs/benchmarks.md); here, that every number is in.
    func testABigListLoadsWhole() {
        var text = ""
        for index in 0..<10_000 { text += "+4930\(1_000_000 + index)\n" }
        let screening = rules("block-list /big.txt\n", lists: ["/big.txt": text])
        XCTAssertEqual(screening.numberCount, 10_000)
        XCTAssertEqual(decide(screening, "030 1005000")?.action, .reject)
        XCTAssertEqual(decide(screening, "+49 30 1009999")?.action, .reject)
        XCTAssertNil(decide(screening, "+49 30 1010000"))
    }

    // MARK: Classes of callers and exceptions

    func testWithheldAndUnknownCallers() {
        let screening = rules("withheld reject\nunknown silence\n")
        XCTAssertEqual(decide(screening, "withheld"), ScreeningDecision(action: .reject, rule: .withheld,
                                                                       source: "/etc/telwatch/screening.conf:1"))
        XCTAssertEqual(decide(screening, "Anonymous")?.rule, .withheld)
        XCTAssertEqual(decide(screening, "+15550100")?.action, .silence)
        XCTAssertNil(decide(screening, "+15550100", ScreeningFacts(isContact: true)))
    }

    func testRepeatCallerAndCalledNumberExceptionsBeatUnknownButNotBlock() {
        let screening = rules("unknown reject\nblock +1900*\nexcept repeat 15m\nexcept called 30d\n")
        let again = ScreeningFacts(lastIncoming: now - 14 * 60)
        XCTAssertEqual(decide(screening, "+15550100", again), ScreeningDecision(action: .allow, rule: .repeatCaller))
        XCTAssertEqual(decide(screening, "+15550100", ScreeningFacts(lastIncoming: now - 16 * 60))?.action, .reject)
        XCTAssertEqual(decide(screening, "+15550100", ScreeningFacts(lastOutgoing: now - 29 * 86_400))?.rule, .called)
        XCTAssertEqual(decide(screening, "+15550100", ScreeningFacts(lastOutgoing: now - 31 * 86_400))?.rule, .unknown)
        XCTAssertEqual(decide(screening, "+19005550100", again)?.rule, .block, "a blocked number calling twice")
    }

    func testQuietHoursByWeekdayAndPastMidnightAndExceptionsBeatThem() {
        let screening = rules("quiet 22:00-07:00 mon-fri\nquiet 12:00-13:00 sat,sun ignore\nexcept contacts\n")
        let tuesdayNight = LocalTime(weekday: 2, minute: 23 * 60)
        let wednesdayEarly = LocalTime(weekday: 3, minute: 6 * 60 + 59)
        let saturdayEarly = LocalTime(weekday: 6, minute: 60)
        let sundayNoon = LocalTime(weekday: 0, minute: 12 * 60 + 30)
        XCTAssertEqual(decide(screening, "+15550100", at: tuesdayNight)?.action, .silence)
        XCTAssertEqual(decide(screening, "+15550100", at: wednesdayEarly)?.action, .silence)
        XCTAssertEqual(decide(screening, "+15550100", at: saturdayEarly)?.action, .silence, "Friday's night")
        XCTAssertNil(decide(screening, "+15550100", at: LocalTime(weekday: 0, minute: 60)), "Saturday's night is not quiet")
        XCTAssertNil(decide(screening, "+15550100", at: LocalTime(weekday: 3, minute: 7 * 60)))
        XCTAssertEqual(decide(screening, "+15550100", at: sundayNoon)?.action, .ignore)
        XCTAssertEqual(decide(screening, "+15550100", ScreeningFacts(isContact: true), at: tuesdayNight)?.rule, .contact)
        XCTAssertEqual(decide(screening, "withheld", at: tuesdayNight)?.rule, .quiet)
    }

    // MARK: Emergencies

    func testNoRuleActsWithinAnHourOfAnEmergencyCall() {
        let screening = rules("withheld reject\nblock +1900*\nquiet 00:00-24:00\n")
        let after = ScreeningFacts(lastEmergency: now - 3599)
        XCTAssertEqual(decide(screening, "withheld", after), ScreeningDecision(action: .allow, rule: .emergency))
        XCTAssertEqual(decide(screening, "+19005550100", after)?.action, .allow)
        XCTAssertEqual(decide(screening, "+19005550100", ScreeningFacts(lastEmergency: now - 3601))?.action, .reject)
        XCTAssertTrue(EmergencyNumbers.contains("112"))
        XCTAssertTrue(EmergencyNumbers.contains("9-1-1"))
        XCTAssertTrue(EmergencyNumbers.contains("19", extra: ["19"]))
        XCTAssertFalse(EmergencyNumbers.contains("+44112"))
        XCTAssertFalse(EmergencyNumbers.contains(""))
    }

    // MARK: Deflect and run

    /// `deflect NUMBER`, `deflect voicemail` (the rules' `voicemail NUMBER`) and `run NAME` (a
    /// named command, the call rejected), wherever an action is taken.
    func testDeflectAndRunRulesCarryTheirNumberAndCommand() {
        let screening = rules("""
            voicemail +1-555-000-1234
            command open-gate /usr/local/bin/open-gate --relay 1
            block deflect +1-555-987-6543 +1900*
            block run open-gate +15550001 +15550002
            block-list deflect voicemail spam.txt
            withheld deflect voicemail
            quiet 00:00-24:00 deflect +15559876543 sat,sun
            """, lists: ["/etc/telwatch/spam.txt": "+1800*\n"])
        let source = "/etc/telwatch/screening.conf"
        XCTAssertEqual(decide(screening, "+19005550100"), ScreeningDecision(
            action: .deflect, rule: .block, source: source + ":3", deflectTo: "+15559876543"), "formatting dropped")
        let gate = ScreeningCommand(name: "open-gate", arguments: ["/usr/local/bin/open-gate", "--relay", "1"])
        XCTAssertEqual(decide(screening, "+15550002"), ScreeningDecision(
            action: .reject, rule: .block, source: source + ":4", command: gate))
        XCTAssertEqual(decide(screening, "+18005550100")?.deflectTo, "+15550001234", "the voicemail number")
        XCTAssertEqual(decide(screening, "withheld"), ScreeningDecision(
            action: .deflect, rule: .withheld, source: source + ":6", deflectTo: "+15550001234"))
        XCTAssertEqual(decide(screening, "+15550003", at: LocalTime(weekday: 6, minute: 600))?.deflectTo, "+15559876543")
        XCTAssertNil(decide(screening, "+15550003"), "a Wednesday")
        XCTAssertEqual(screening.commands["open-gate"], gate)
    }

    /// A number in several block lists: a command's reject, then a reject, then a deflection.
    func testTheStrongestBlockActionWinsWhateverTheOrder() {
        let screening = rules("""
            command gate /bin/true
            block silence +1900*
            block deflect +15559876543 +1900*
            block +1900*
            block run gate +1900*
            """)
        XCTAssertEqual(decide(screening, "+19005550100")?.command?.name, "gate")
        XCTAssertEqual(decide(rules("block deflect +15559876543 +1900*\nblock +1900*\n"), "+19005550100")?.action, .reject)
        XCTAssertEqual(decide(rules("block ignore +1900*\nblock deflect +15559876543 +1900*\n"), "+19005550100")?.action,
                       .deflect)
    }

    /// A number to deflect to is checked as the rules are read: never an emergency number, and
    /// dial characters only (the stack writes it into an AT command): a rules error, said with
    /// its line, and the file is not used.
    func testAnEmergencyOrHostileDeflectNumberIsARulesError() {
        XCTAssertEqual(refusal("block deflect 112 +1900*\n"),
                       "/r.conf:1: deflect: '112' is an emergency number: no call is deflected to one")
        XCTAssertEqual(refusal("\nwithheld deflect +911\n"),
                       "/r.conf:2: deflect: '+911' is an emergency number: no call is deflected to one")
        XCTAssertEqual(refusal("voicemail 00112\n"),
                       "voicemail: '00112' is an emergency number: no call is deflected to one".prefixed("/r.conf:1: "))
        XCTAssertEqual(refusal("block deflect +1555;+CFUN=0 +1900*\n"),
                       "/r.conf:1: deflect: '+1555;+CFUN=0' is no number to deflect to: ';' is not a dial character")
        XCTAssertEqual(refusal("unknown deflect +1555$(reboot)\n"),
                       "/r.conf:1: deflect: '+1555$(reboot)' is no number to deflect to: '$' is not a dial character")
        XCTAssertEqual(refusal("block deflect voicemail +1900*\nvoicemail +15550001234\n"),
                       "/r.conf:1: deflect voicemail: no voicemail number above this line (voicemail NUMBER)")
        XCTAssertEqual(refusal("block deflect\n"), "/r.conf:1: deflect takes a number or voicemail (deflect +15559876543)")
        XCTAssertEqual(refusal("block run gate +1555\n"),
                       "/r.conf:1: run 'gate': no command of that name above this line (command 'gate' PROGRAM ARGUMENTS…)")
        XCTAssertEqual(refusal("command ga/te /bin/true\n"),
                       "/r.conf:1: 'ga/te' is no command name (letters, digits, - and _; at most 32)")
        XCTAssertEqual(refusal("command gate\n")?.hasPrefix("/r.conf:1: command takes a name and a program"), true)
        XCTAssertEqual(refusal("command gate /bin/true\ncommand gate /bin/false\n"), "/r.conf:2: command 'gate' is named twice")
    }
}

private extension String {
    func prefixed(_ prefix: String) -> String { prefix + self }
}
