import Glibc

/// What a reader who takes no lock (`telwatch status`) finds where the run record belongs.
public enum RecordLook: Equatable {
    case none
    case record(RunRecord)
    /// The directory or the record exists but this user may not read it.
    case unreadable(String)
    /// What stands there is no record telwatch can use (a link, no regular file, too large, not
    /// a run record, a failed read): the next telwatch to start says what it does about it.
    case unusable(path: String, reason: String)
}
