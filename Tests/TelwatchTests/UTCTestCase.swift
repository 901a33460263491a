import Glibc
import XCTest

/// Text times are local: tests that compare lines written for UTC run in UTC, and the machine's
/// zone is put back after.
class UTCTestCase: XCTestCase {
    /// 2026-11-29T14:20:45.402Z.
    let now = 1_795_962_045.402
    private var savedTimeZone: String?

    override func setUp() {
        savedTimeZone = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", "UTC", 1)
        tzset()
    }

    override func tearDown() {
        if let savedTimeZone { setenv("TZ", savedTimeZone, 1) } else { unsetenv("TZ") }
        tzset()
    }
}
