import CallMonitor

/// The parts of a live call's JSON line that stay the same from one of its events to the next
/// (its id, backend, modem and path; its direction, number, name and contact; its flags and first
/// sight; its answer, end and duration), kept as the bytes they were written as and written again while the call's fields they
/// come from are the same: a storm's line then escapes and formats only what changed (its state,
/// its time). Kept per live call and dropped with the call's `disconnected` line, so it holds at
/// most the live calls (and never more than `limit`: past it, everything kept is dropped).
final class CallLineParts {
    /// What one live call's parts were written from, and the bytes of each part written so far.
    final class Entry {
        let call: CallSnapshot
        let contact: String?
        let redacted: Bool
        var parts: [[UInt8]?]

        init(call: CallSnapshot, contact: String?, redacted: Bool, count: Int) {
            self.call = call
            self.contact = contact
            self.redacted = redacted
            parts = [[UInt8]?](repeating: nil, count: count)
        }

        /// Whether a line of `call` writes the same parts: every field they are written from is
        /// the same (strings kept from one event to the next compare by their storage, at once).
        /// A live call's duration is nil or follows from its times: the state is not compared.
        func writesSame(as call: CallSnapshot, contact: String?, redacted: Bool) -> Bool {
            let kept = self.call
            return kept.id == call.id && kept.key == call.key && kept.modem == call.modem
                && kept.modemIdentity == call.modemIdentity && kept.direction == call.direction
                && kept.number == call.number && kept.name == call.name && self.contact == contact
                && kept.multiparty == call.multiparty && kept.initial == call.initial
                && kept.resumed == call.resumed && kept.missed == call.missed && kept.firstSeen == call.firstSeen
                && kept.connectedAt == call.connectedAt && kept.endedAt == call.endedAt && self.redacted == redacted
        }
    }

    /// More live calls than any phone has: only reached if calls ended without a line.
    static let limit = 1024
    /// How many parts a line has (`EventSchema.write` numbers them from 0).
    static let partCount = 4
    private var entries: [String: Entry] = [:]

    /// The entry whose parts a line of `call` can write, made afresh when the call's fields
    /// changed; nil for an ended call, whose entry goes (its line is its last but for `missed`).
    func entry(for call: CallSnapshot, contact: String?, redacted: Bool) -> Entry? {
        guard call.state != .disconnected else {
            entries.removeValue(forKey: call.id)
            return nil
        }
        if let kept = entries[call.id], kept.writesSame(as: call, contact: contact, redacted: redacted) {
            return kept
        }
        if entries.count >= CallLineParts.limit { entries.removeAll() }
        let made = Entry(call: call, contact: contact, redacted: redacted, count: CallLineParts.partCount)
        entries[call.id] = made
        return made
    }

    var count: Int { entries.count }
}
