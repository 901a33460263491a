/// An exit status carried where a command stops early.
struct ExitCode: Error {
    let status: Int32
    init(_ status: Int32) { self.status = status }
}
