import CallMonitor

/// A command the rules file names (`command NAME PROGRAM ARGUMENTS…`), which a `run NAME` rule
/// runs as it rejects a call: the gate opener (docs/screening.md). An argv, never a shell string:
/// the caller's number reaches it only in its environment, as a hook's does.
public struct ScreeningCommand: Hashable, Sendable {
    public var name: String
    public var arguments: [String]

    public init(name: String, arguments: [String]) {
        self.name = name
        self.arguments = arguments
    }
}

/// What a rule of the file does to a call: its action, where a `deflect` sends the call, and the
/// command a `run NAME` rule runs (its action is `reject`: the caller pays nothing).
public struct ScreeningRuleAction: Hashable, Sendable {
    public var action: ScreeningAction
    /// `deflect`: the number, dial characters only and no emergency number (checked as the rules
    /// were read).
    public var deflectTo: String?
    public var command: ScreeningCommand?

    public init(_ action: ScreeningAction, deflectTo: String? = nil, command: ScreeningCommand? = nil) {
        self.action = action
        self.deflectTo = deflectTo
        self.command = command
    }

    public static let reject = ScreeningRuleAction(.reject)
    public static let silence = ScreeningRuleAction(.silence)
    public static let ignore = ScreeningRuleAction(.ignore)
    public static let allow = ScreeningRuleAction(.allow)

    /// Whether the stack is asked to end or send on the call (a hang-up or a deflection), which
    /// needs its permission (docs/screening.md, "Permissions").
    public var asksTheStack: Bool { action == .reject || action == .deflect }

    /// A number in several block lists takes the strongest: a command's reject (the most
    /// specific), a reject, a deflection, ignore, silence; among equals the one read first.
    var strength: Int {
        switch action {
        case .reject: return command == nil ? 1 : 0
        case .deflect: return 2
        case .ignore: return 3
        case .silence: return 4
        case .allow: return 5
        }
    }
}

extension ScreeningRules {
    /// A number a rule deflects to (`deflect NUMBER`, `voicemail NUMBER`): dial characters only
    /// (formatting dropped), and never an emergency number: the stack would dial what it is given
    /// (docs/modem-stacks.md §13). `CallMonitor.act` checks it again against the SIM's list.
    static func deflectNumber(_ word: String) -> Result<String, RefusedEntry> {
        let number: DialString
        do { number = try DialString(number: word) } catch {
            return .failure(RefusedEntry(reason: "\(quoted(word)) is no number to deflect to: \(error)"))
        }
        if EmergencyDial.isEmergency(number) {
            return .failure(RefusedEntry(reason: "\(quoted(word)) is an emergency number: no call is deflected to one"))
        }
        return .success(number.value)
    }

    /// The action that starts at `words[index]`: `reject`, `silence`, `ignore`, `allow`,
    /// `deflect NUMBER`, `deflect voicemail` or `run NAME`; nil (index unchanged) when that word
    /// is none. `voicemail` and `NAME` are those of lines above.
    static func ruleAction(_ words: [String], at index: inout Int, rules: ScreeningRules,
                           fail: (String) -> ScreeningFileError) throws(ScreeningFileError) -> ScreeningRuleAction? {
        guard index < words.count else { return nil }
        let word = words[index]
        if let plain = ScreeningAction(rawValue: word), plain != .deflect {
            index += 1
            return ScreeningRuleAction(plain)
        }
        guard word == "deflect" || word == "run" else { return nil }
        guard index + 1 < words.count else {
            throw fail(word == "run" ? "run takes the name of a command (command NAME PROGRAM ARGUMENTS… above it)"
                       : "deflect takes a number or voicemail (deflect +15559876543)")
        }
        let argument = words[index + 1]
        index += 2
        if word == "run" {
            guard let command = rules.commands[argument] else {
                throw fail("run \(quoted(argument)): no command of that name above this line (command \(quoted(argument)) PROGRAM ARGUMENTS…)")
            }
            return ScreeningRuleAction(.reject, command: command)
        }
        if argument == "voicemail" {
            guard let voicemail = rules.voicemail else {
                throw fail("deflect voicemail: no voicemail number above this line (voicemail NUMBER)")
            }
            return ScreeningRuleAction(.deflect, deflectTo: voicemail)
        }
        switch deflectNumber(argument) {
        case .success(let number): return ScreeningRuleAction(.deflect, deflectTo: number)
        case .failure(let refused): throw fail("deflect: " + refused.reason)
        }
    }

    /// A command's name: letters, digits, `-` and `_`, as a word of the rules file is written.
    static func isCommandName(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count) && name != "voicemail" && name.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x2D || $0 == 0x5F
        }
    }
}
