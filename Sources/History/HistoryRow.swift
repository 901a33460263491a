import CallMonitor
import Pipeline

/// One call as history keeps it. Its fields are the call events' own keys (`EventSchema`): made
/// from the call's snapshot, typed (`init(_:)`), and written back out (`write(into:)`) under the
/// event stream's names, so `telwatch log --json` and the event stream never disagree on what a
/// key means. History adds one key, `unseen`, and one state, `unknown`: a call whose end
/// telwatch never saw.
public struct HistoryRow: Equatable, Sendable {
    public var callID = ""
    public var backend = ""
    public var modem = ""
    public var path = ""
    /// `incoming`, `dialing`, `connected` while live; `disconnected` once ended; `unknown` when
    /// telwatch stopped before it saw the end (closed at its next start, or as it stopped).
    public var state = ""
    public var direction = ""
    /// As the stack gave it: hostile bytes are stored as they came, and escaped where printed.
    public var number = ""
    public var name = ""
    public var reason: String?
    /// Sticky: the call was in a conference at some point.
    public var multiparty = false
    public var initial = false
    /// Sticky: something about the call was learned by the read after a resume.
    public var resumed = false
    public var missed = false
    /// A missed call nobody has marked seen (`telwatch log --mark-seen`).
    public var unseen = false
    /// What call screening did: `reject`, `ignore`, `silence` or `allow` (a rule let it ring, or
    /// a reject's hang-up failed); nil where no rule spoke (docs/screening.md).
    public var screened: String?
    public var firstSeen = 0.0
    public var connectedAt: Double?
    public var endedAt: Double?
    public var duration: Double?

    public init() {}

    /// The call as its event left it (the enums become their words here, at the database's edge).
    init(_ call: CallSnapshot) {
        callID = call.id
        backend = call.key.backend.rawValue
        modem = call.modem.eventValue
        path = call.key.path
        state = call.state.rawValue
        direction = call.direction.rawValue
        number = call.number
        name = call.name
        reason = call.reason?.word
        multiparty = call.multiparty
        initial = call.initial
        resumed = call.resumed
        missed = call.missed
        firstSeen = call.firstSeen
        connectedAt = call.connectedAt
        endedAt = call.endedAt
        duration = call.duration
    }

    /// The states of a call that is still going on, as far as the row knows.
    public static let liveStates = ["incoming", "dialing", "connected"]
    /// The state of a call whose end telwatch never saw.
    public static let unknownState = "unknown"

    public var isLive: Bool { HistoryRow.liveStates.contains(state) }

    /// Every key, in the event stream's order with `unseen` after `missed`.
    public func write<W: EventFieldWriter>(into writer: inout W) {
        writer.add("call_id", callID)
        writer.add("backend", backend)
        writer.add("modem", modem)
        writer.add("path", path)
        writer.add("state", state)
        writer.add("direction", direction)
        writer.add("number", number)
        writer.add("name", name)
        writer.add("reason", reason)
        writer.add("multiparty", multiparty)
        writer.add("initial", initial)
        writer.add("resumed", resumed)
        writer.add("missed", missed)
        writer.add("unseen", unseen)
        writer.add("screened", screened)
        writer.add("first_seen", time: firstSeen)
        writer.add("connected_at", time: connectedAt)
        writer.add("ended_at", time: endedAt)
        writer.add("duration", seconds: duration)
    }
}

