/// The decision about one call: what is done, and which rule said so (with the rule's place in
/// its file, where it has one).
public struct ScreeningDecision: Sendable, Equatable {
    public var action: ScreeningAction
    public var rule: ScreeningRuleKind
    /// `FILE:LINE` of the rule, or the list file the number was found in.
    public var source: String?
    /// `deflect`: where the call is sent.
    public var deflectTo: String?
    /// A `run NAME` rule's command, run as the call is rejected (the gate opener).
    public var command: ScreeningCommand?

    public init(action: ScreeningAction, rule: ScreeningRuleKind, source: String? = nil, deflectTo: String? = nil,
                command: ScreeningCommand? = nil) {
        self.action = action
        self.rule = rule
        self.source = source
        self.deflectTo = deflectTo
        self.command = command
    }

    /// The decision a rule of the file makes.
    public init(_ ruleAction: ScreeningRuleAction, rule: ScreeningRuleKind, source: String?) {
        self.init(action: ruleAction.action, rule: rule, source: source, deflectTo: ruleAction.deflectTo,
                  command: ruleAction.command)
    }

    /// `block (rules.conf:3)`: the rule as events and hooks show it.
    public var ruleText: String { source.map { "\(rule.rawValue) (\($0))" } ?? rule.rawValue }
}
