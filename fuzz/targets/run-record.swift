// Fuzz target: the run record, the sleep record and the live calls' record, as read back from
// the state directory.
//
// The state directory is telwatch's own, but a record may be cut short by a crash or edited by
// hand. Checked besides "no crash": a record that parses writes out text that parses to the same
// record (the writer and the reader agree).

import BGRunManager
import CallMonitor
import Pipeline

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let record = RunRecord(encoded: text) {
        // Read back by status (a sum, an hour) and by the recovery (a signal to a process group).
        precondition(record.startedAt.isFinite && record.updatedAt.isFinite && record.lease?.isFinite != false
                     && record.leaseExpiresAt?.isFinite != false, "a time that is no number")
        precondition((record.command?.pid ?? 2) > 1, "a command pid of \(record.command?.pid ?? 0)")
        let written = record.encoded
        precondition(RunRecord(encoded: written)?.encoded == written, "a run record does not survive a round trip")
    }
    if let record = SleepRecord(encoded: text) {
        let written = record.encoded
        precondition(SleepRecord(encoded: written)?.encoded == written, "a sleep record does not survive a round trip")
    }
    let calls = LiveCallsRecord.decode(text, since: 0)
    let snapshots = calls.map { call in
        CallSnapshot(id: call.id, key: call.key, modem: "", direction: call.direction, number: call.number,
                     state: call.state, detail: nil, firstSeen: call.firstSeen, connectedAt: call.connectedAt)
    }
    precondition(LiveCallsRecord.decode(LiveCallsRecord.encode(snapshots), since: 0) == calls,
                 "a live-calls record does not survive a round trip")
    return 0
}
