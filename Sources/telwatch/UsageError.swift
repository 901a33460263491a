/// A mistake in how telwatch was called: one line on stderr and exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
