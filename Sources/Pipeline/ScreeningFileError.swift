/// Why a number is no list entry (`ScreeningRules.listEntry`).
public struct RefusedEntry: Error, Equatable {
    public var reason: String
}

/// What is wrong with a rules or list file: the file, the line, and why.
public struct ScreeningFileError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var reason: String

    public init(file: String, line: Int? = nil, _ reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String { file + (line.map { ":\($0)" } ?? "") + ": " + reason }
}
