/// telwatch's version, outside main.swift: a top-level value there is set only when main runs,
/// and the tests read it without running main.
enum Release {
    static let version = "0.2.0"
}
