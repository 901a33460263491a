import BGRunManager
import CallMonitor
import Loop
import Processes

/// The `TELWATCH_*` variables of one call event: what a hook of that event and a call-scoped
/// command started by it are told. One list, so the two can never describe a call differently.
///
/// `TELWATCH_CALL_ID`, `TELWATCH_STATE`, `TELWATCH_PREVIOUS_STATE` ("" at first sight),
/// `TELWATCH_DETAIL` (ringing, waiting, dialing, alerting, active, held; "" once disconnected),
/// `TELWATCH_DIRECTION`, `TELWATCH_NUMBER`, `TELWATCH_NAME` (the stack's), `TELWATCH_CONTACT`
/// (`--contacts`; "" for none), `TELWATCH_REASON`, `TELWATCH_BACKEND`, `TELWATCH_MODEM`,
/// `TELWATCH_MODEM_ID` (the modem's IMEI or equipment id), `TELWATCH_MODEM_NUMBER` (its own
/// number), `TELWATCH_OPERATOR` ("" for what the stack does not say),
/// `TELWATCH_PATH`, `TELWATCH_INITIAL`, `TELWATCH_MISSED`, `TELWATCH_MULTIPARTY` and
/// `TELWATCH_RESUMED` (`true`/`false`), `TELWATCH_CONNECTED_AT` (epoch seconds; "" if never
/// connected), `TELWATCH_DURATION` (seconds from first sight, or from connecting, to the end;
/// "" while live), `TELWATCH_LIVE_CALLS` (after the event), `TELWATCH_RUN_ID` ("" for none),
/// `TELWATCH_TIME` (epoch seconds, now).
public enum CallEnvironment {
    public static func variables(of call: CallSnapshot, previous: CallState?, liveCalls: Int, runID: String?,
                                 contact: String?) -> [(name: String, value: String)] {
        [
            ("TELWATCH_CALL_ID", call.id),
            ("TELWATCH_STATE", call.state.rawValue),
            ("TELWATCH_PREVIOUS_STATE", previous?.rawValue ?? ""),
            ("TELWATCH_DETAIL", call.detail?.rawValue ?? ""),
            ("TELWATCH_DIRECTION", call.direction.rawValue),
            ("TELWATCH_NUMBER", call.number),
            ("TELWATCH_NAME", call.name),
            ("TELWATCH_CONTACT", contact ?? ""),
            ("TELWATCH_REASON", call.reason ?? ""),
            ("TELWATCH_BACKEND", call.key.backend.rawValue),
            ("TELWATCH_MODEM", call.modem),
            ("TELWATCH_MODEM_ID", call.modemIdentity.equipmentID),
            ("TELWATCH_MODEM_NUMBER", call.modemIdentity.ownNumber),
            ("TELWATCH_OPERATOR", call.modemIdentity.operatorName),
            ("TELWATCH_PATH", call.key.path),
            ("TELWATCH_INITIAL", call.initial ? "true" : "false"),
            ("TELWATCH_MISSED", call.missed ? "true" : "false"),
            ("TELWATCH_MULTIPARTY", call.multiparty ? "true" : "false"),
            ("TELWATCH_RESUMED", call.resumed ? "true" : "false"),
            ("TELWATCH_CONNECTED_AT", call.connectedAt.map(formatSeconds) ?? ""),
            ("TELWATCH_DURATION", call.duration.map(formatSeconds) ?? ""),
            ("TELWATCH_LIVE_CALLS", String(liveCalls)),
            ("TELWATCH_RUN_ID", runID ?? ""),
            ("TELWATCH_TIME", formatSeconds(wallClockNow())),
        ]
    }
}
