/// Which rule decided, in the order they are tried (docs/screening.md, "Precedence").
public enum ScreeningRuleKind: String, Sendable, CaseIterable {
    /// An outgoing emergency call within the last hour: no rule acts.
    case emergency
    /// An `allow` number or `allow-list` entry.
    case allow
    /// A contact (`except contacts`).
    case contact
    /// A `block` number or `block-list` entry.
    case block
    /// The same number called within `except repeat`'s window.
    case repeatCaller = "repeat"
    /// A number called from this phone within `except called`'s window.
    case called
    /// The caller's number is withheld.
    case withheld
    /// The caller is not in the contacts.
    case unknown
    /// A quiet-hours window.
    case quiet
    /// Not a rule of the file: the user silenced a ringing call (D-Bus `Silence`, MQTT `silence`).
    case user
}
