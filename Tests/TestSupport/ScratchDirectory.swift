import Glibc
import Loop

/// A fresh directory under /tmp for one test, removed with everything in it by `remove()`.
public final class ScratchDirectory {
    public let path: String

    public init(prefix: String = "telwatch-test") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp failed") }
        path = String(cString: made)
    }

    public func remove() {
        _ = try? BusFixture.removeTree(path)
    }
}
