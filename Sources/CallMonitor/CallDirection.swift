public enum CallDirection: String, Sendable, CaseIterable {
    case incoming, outgoing, unknown
}
