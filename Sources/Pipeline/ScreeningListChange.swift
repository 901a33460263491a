/// What putting one number on a list did to a rules file.
public struct ScreeningListChange: Sendable, Equatable {
    /// The file after the change (the same bytes when nothing changed).
    public var bytes: [UInt8]
    /// Whether a line was appended; false when a line of the list already held the number.
    public var appended: Bool
    /// The lines of the opposite list the number was taken out of, numbered in the file before.
    public var takenOut: [Int]

    public init(bytes: [UInt8], appended: Bool, takenOut: [Int]) {
        self.bytes = bytes
        self.appended = appended
        self.takenOut = takenOut
    }

    public var changed: Bool { appended || !takenOut.isEmpty }
}
