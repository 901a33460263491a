/// Strings from the bus end up on stdout and in hook environments: a value no real number or
/// name comes close to is an error, not data.
enum CallText {
    static let maxBytes = 256

    static func fits(_ text: String) -> Bool { text.utf8.count <= maxBytes }

    /// For notices: long or hostile values shortened.
    static func clip(_ text: String, _ limit: Int = 80) -> String {
        text.utf8.count <= limit ? text : String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "…"
    }
}
