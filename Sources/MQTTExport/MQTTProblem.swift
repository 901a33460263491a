import Glibc

/// What went wrong with MQTT, by kind: the stderr line is said once per kind until it is fixed.
public struct MQTTProblem: Error, CustomStringConvertible {
    public enum Kind: Sendable { case setup, resolve, unreachable, refused, certificate, lost, tooLarge }
    public let kind: Kind
    public let description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
