import CallMonitor
import Pipeline

/// A value read back from the database. The file is group-writable (`telwatch log --mark-seen`),
/// so anything may have been put in it: a value no telwatch writes is read as unknown, and no
/// output, sum or conversion downstream ever meets it.
enum StoredValue {
    /// The moments RFC 3339 can write (years 1970 to 9999), as the JSON lines do.
    static func time(_ value: Double?) -> Double? {
        guard let value, value >= 0, value < 253_402_300_800 else { return nil }
        return value
    }

    /// Longer than any call (about 31 years).
    static let longestDuration = 1e9

    static func duration(_ value: Double?) -> Double? {
        guard let value, value >= 0, value <= longestDuration else { return nil }
        return value
    }
}
