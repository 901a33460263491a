/// The decision about one call: what is done, and which rule said so (with the rule's place in
/// its file, where it has one).
public struct ScreeningDecision: Sendable, Equatable {
    public var action: ScreeningAction
    public var rule: ScreeningRuleKind
    /// `FILE:LINE` of the rule, or the list file the number was found in.
    public var source: String?

    public init(action: ScreeningAction, rule: ScreeningRuleKind, source: String? = nil) {
        self.action = action
        self.rule = rule
        self.source = source
    }

    /// `block (rules.conf:3)`: the rule as events and hooks show it.
    public var ruleText: String { source.map { "\(rule.rawValue) (\($0))" } ?? rule.rawValue }
}
