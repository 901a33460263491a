import CallMonitor
import Pipeline

/// The rows that call events changed and that wait to be written: one per call, its newest,
/// in the order the calls first changed. A change history does not keep (a held call resumed, a
/// reason alone) queues nothing, and a row is made from the event's call snapshot, typed
/// (`HistoryRow.init(_:)`), so it carries the event stream's values.
struct PendingRows {
    /// Past this many calls waiting, a new call is not recorded (the database cannot be written).
    let limit: Int
    private(set) var rows: [HistoryRow] = []
    private var index: [String: Int] = [:]
    /// Each live call's row as last queued.
    private var known: [String: KnownCall] = [:]
    /// Calls not recorded for want of room here since the rows were last written.
    private(set) var dropped = 0
    /// Calls found live at start that an earlier telwatch had recorded, by id: the row as it left it.
    private var continued: [String: HistoryRow] = [:]
    /// What screening did to each live call (`screened`), for its rows from then on.
    private var screening: [String: String] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    enum Outcome: Equatable {
        case unchanged
        case queued
        /// Queued: the call's last row.
        case ended
        /// Not recorded: `first` when it is the first since the rows were last written.
        case dropped(first: Bool)
    }

    var isEmpty: Bool { rows.isEmpty }
    var count: Int { rows.count }

    mutating func record(_ event: TrackerEvent) -> Outcome {
        // `missed` repeats the `disconnected` before it, which carries `missed` already; the
        // aggregate edges and announcements are not calls.
        let call: CallSnapshot
        switch event {
        case .transition(let snapshot, _), .updated(let snapshot): call = snapshot
        case .missed, .busy, .idle, .announced, .withdrawn: return .unchanged
        }
        let earlier = known[call.id]
        // Compared in place: most events of a live call (a storm's holds and resumes) change
        // nothing a row records, and copy none of its strings.
        if let earlier, earlier.print.records(call) { return .unchanged }
        let print = CallPrint(call)
        var row = HistoryRow(call)
        if let origin = continued[call.id] { PendingRows.merge(&row, into: origin) }
        row.multiparty = row.multiparty || earlier?.multiparty == true
        row.resumed = row.resumed || earlier?.resumed == true
        row.screened = screening[call.id]
        let ended = call.state == .disconnected
        if ended {
            known.removeValue(forKey: call.id)
            screening.removeValue(forKey: call.id)
            continued.removeValue(forKey: call.id)
        } else {
            known[call.id] = KnownCall(print: print, multiparty: row.multiparty, resumed: row.resumed, row: row)
        }
        return queue(row, ended: ended)
    }

    /// A call was screened (docs/screening.md): its row says what was done, from now on. A row
    /// written already (a hang-up that failed a turn later) is queued again.
    mutating func record(_ screened: ScreenedCall) -> Outcome {
        let id = screened.call.id
        let action = screened.action.rawValue
        if let at = index[id] {
            rows[at].screened = action
            known[id]?.row.screened = action
            if rows[at].isLive { screening[id] = action }
            return .queued
        }
        guard let earlier = known[id] else { return .unchanged }
        screening[id] = action
        earlier.row.screened = action
        return queue(earlier.row, ended: false)
    }

    private mutating func queue(_ row: HistoryRow, ended: Bool) -> Outcome {
        if let at = index[row.callID] {
            rows[at] = row
        } else if rows.count < limit {
            index[row.callID] = rows.count
            rows.append(row)
        } else {
            dropped += 1
            return .dropped(first: dropped == 1)
        }
        return ended ? .ended : .queued
    }

    /// The queued rows of calls found live at start, not yet matched with an earlier row.
    var foundAtStart: [HistoryRow] {
        rows.filter { $0.initial && continued[$0.callID] == nil }
    }

    /// The call found live at start is the one `origin` recorded before telwatch restarted (the
    /// tracker gave it the same id, first sight and answer): its row goes on, and keeps what
    /// only the row knew (whether the call was first seen live at start, multiparty, the name).
    mutating func continueRow(from origin: HistoryRow) {
        let id = origin.callID
        continued[id] = origin
        guard let at = index[id] else { return }
        PendingRows.merge(&rows[at], into: origin)
        if let known = known[id] {
            known.multiparty = rows[at].multiparty
            known.resumed = rows[at].resumed
            known.row = rows[at]
        }
    }

    private static func merge(_ row: inout HistoryRow, into origin: HistoryRow) {
        row.initial = origin.initial
        row.multiparty = row.multiparty || origin.multiparty
        row.resumed = row.resumed || origin.resumed
        if row.number.isEmpty { row.number = origin.number }
        if row.name.isEmpty { row.name = origin.name }
    }

    /// The rows were written.
    mutating func written() {
        rows.removeAll(keepingCapacity: true)
        index.removeAll(keepingCapacity: true)
    }

    /// How many calls were not recorded since the last time this was asked; counting starts over.
    mutating func takeDropped() -> Int {
        defer { dropped = 0 }
        return dropped
    }

    /// History is off: nothing is kept.
    mutating func forget() {
        written()
        known.removeAll()
        continued.removeAll()
        screening.removeAll()
    }
}

/// What of a call its row records, to tell a change worth writing (a state, an answer, a
/// number) from one that is not (a held call resumed, a reason alone).
private struct CallPrint {
    var state: CallState
    var connected: Bool
    var direction: CallDirection
    var number: String
    var name: String
    var modem: ModemPath
    var multiparty: Bool
    var resumed: Bool

    init(_ call: CallSnapshot) {
        state = call.state
        connected = call.connectedAt != nil
        direction = call.direction
        number = call.number
        name = call.name
        modem = call.modem
        multiparty = call.multiparty
        resumed = call.resumed
    }

    /// Whether `call` is what this print records (its fields are the same), with nothing copied.
    func records(_ call: CallSnapshot) -> Bool {
        state == call.state && connected == (call.connectedAt != nil) && direction == call.direction
            && multiparty == call.multiparty && resumed == call.resumed && number == call.number
            && name == call.name && modem == call.modem
    }
}

/// A class: each event of a live call looks its entry up, and a reference costs one retain where
/// a copy of the row would cost one per string.
private final class KnownCall {
    let print: CallPrint
    /// Sticky: the row says so once any event did.
    var multiparty: Bool
    var resumed: Bool
    /// The row as last queued, to queue again with what screening did.
    var row: HistoryRow

    init(print: CallPrint, multiparty: Bool, resumed: Bool, row: HistoryRow) {
        self.print = print
        self.multiparty = multiparty
        self.resumed = resumed
        self.row = row
    }
}
