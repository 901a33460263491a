import BGRunManager
import Pipeline

/// The last sleep and resume, as `status` and `doctor` show them.
enum SleepStatus {
    static func json(_ record: SleepRecord) -> String {
        var object = JSONObject()
        EventSchema().write(record, into: &object)
        return object.line
    }

    static func lines(_ record: SleepRecord) -> [String] {
        var line = "sleep: last " + (record.sleptAt.map(Timestamp.readable) ?? "never")
        if record.isAsleep {
            line += ", not resumed since"
        } else if let resumedAt = record.resumedAt {
            line += ", resumed " + Timestamp.readable(resumedAt)
        }
        line += record.lastSleepOverridden ? "; a call was live (the lock was overridden)" : "; no call was live"
        var lines = [line]
        if record.overrides > 0, let at = record.lastOverrideAt {
            lines.append("sleep: \(record.overrides) sleep\(record.overrides == 1 ? "" : "s") with a call live, the last "
                         + "\(Timestamp.readable(at)) (run \(TerminalText.field(String(record.lastOverrideRun?.prefix(8) ?? "?"))), lock "
                         + "\(record.lastOverrideLock?.rawValue ?? "?"))")
        }
        return lines
    }
}
