import Glibc

/// What a reader who takes no lock (`telwatch status`) finds where the run record belongs.
public enum RecordLook: Equatable {
    case none
    case record(RunRecord)
    /// The directory or the record exists but this user may not read it.
    case unreadable(String)
}
