import BGRunManager
import Glibc
import Pipeline

/// The run as the state directory tells it to `telwatch status` when no service answers: held
/// by a telwatch that still runs, left behind by one that is gone (killed before it could close
/// the run), none, or not readable by this user — which must not pass for "none".
enum RecordedRun {
    case none
    case held(RunRecord)
    /// The record of the last run, whose telwatch is gone (its pid is dead or now another process's).
    case orphaned(RunRecord)
    /// The directory or the record may not be read; `group` may read it.
    case unreadable(path: String, group: String)
    /// Something in the record's place that is no usable record (`RecordLook.unusable`).
    case unusable(path: String, reason: String)

    init(directory: String) {
        switch RunStateStore.look(directory: directory) {
        case .none: self = .none
        case .record(let record): self = record.holderIsRunning ? .held(record) : .orphaned(record)
        case .unreadable(let path): self = .unreadable(path: path, group: RecordedRun.group(of: directory))
        case .unusable(let path, let reason): self = .unusable(path: path, reason: reason)
        }
    }

    /// The group that owns the state directory (the service's, `telwatch` as packaged).
    private static func group(of directory: String) -> String {
        var info = stat()
        guard stat(directory, &info) == 0, let entry = getgrgid(info.st_gid), let name = entry.pointee.gr_name else {
            return "telwatch"
        }
        return String(cString: name)
    }

    /// The text line; nil when the run is held (status shows the record itself).
    func line() -> String? {
        switch self {
        case .none, .held: return nil
        case .orphaned(let run):
            return "run: none: the last run (\(TerminalText.field(String(run.runID.prefix(8)))), \(TerminalText.field(run.reason))) was held by "
                + "telwatch pid \(run.pid) from \(Timestamp.localClock(run.startedAt)), last updated "
                + "\(Timestamp.localClock(run.updatedAt)); that telwatch is gone (killed before it could end the run); "
                + "the next telwatch to start closes it"
        case .unreadable(let path, let group):
            return "run: unknown: cannot read the state directory (\(TerminalText.field(path))): run as root or as a "
                + "member of the \(TerminalText.field(group)) group"
        case .unusable(let path, let reason):
            return "run: unknown: the run record (\(TerminalText.field(path))) cannot be used: \(reason); "
                + "the next telwatch to start removes it, or says why it cannot"
        }
    }

    /// Keys added to `status --json` after `run` (which is null unless held).
    func jsonFields() -> String {
        switch self {
        case .none, .held: return ""
        case .orphaned(let run):
            var object = JSONObject()
            object.add("run_id", run.runID)
            object.add("reason", run.reason)
            object.add("pid", Int(run.pid))
            object.add("started_at", time: run.startedAt)
            object.add("updated_at", time: run.updatedAt)
            object.add("holder_running", false)
            return ",\"last_run\":" + object.line
        case .unreadable(let path, let group):
            var object = JSONObject()
            object.add("path", path)
            object.add("group", group)
            return ",\"run_unreadable\":" + object.line
        case .unusable(let path, let reason):
            var object = JSONObject()
            object.add("path", path)
            object.add("reason", reason)
            return ",\"run_unusable\":" + object.line
        }
    }
}
