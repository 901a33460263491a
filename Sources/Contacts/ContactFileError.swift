/// What is wrong with a contacts file, in words (with the line where there is one).
public struct ContactFileError: Error, Equatable, CustomStringConvertible {
    public var line: Int?
    public var reason: String

    public init(line: Int? = nil, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { line.map { "line \($0): " + reason } ?? reason }
}
