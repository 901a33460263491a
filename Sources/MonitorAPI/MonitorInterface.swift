import DBus

/// `io.telwatch.Monitor1` as introspection shows it: members, argument names and doc strings.
/// dist/dbus-1/interfaces/io.telwatch.Monitor1.xml is what `Introspect` answers, byte for byte
/// (a test compares them): change both together.
enum MonitorInterface {
    static let documentation = """
        telwatch's view of the voice calls of ModemManager and oFono and of the background run it \
        holds while any is live. Signals go out only while at least one client is \
        subscribed (Subscribe). Silence stops a call's ring; Dial places a call, and each call's \
        io.telwatch.Call1 answers, hangs up, deflects and sends tones, for callers polkit allows \
        (io.telwatch.answer-hangup, io.telwatch.dial), each reply once the stack has answered. Moments are microseconds since the epoch (t); a null of the JSON \
        line is an empty array of its type. See docs/dbus-api.md.
        """

    static func make(api: MonitorAPI, version: String) throws -> ExportedInterface {
        let interface = try ExportedInterface(MonitorNames.interface, documentation: documentation)
        try interface.addMethod("Subscribe", documentation: .init("""
            Start receiving this object's signals (Event, PropertiesChanged, InterfacesAdded, \
            InterfacesRemoved) until Unsubscribe or until the caller leaves the bus. At most 64 \
            subscribers at once.
            """)) { [unowned api] call in
            try api.subscribe(call.sender)
            return []
        }
        try interface.addMethod("Unsubscribe", documentation: .init("Stop receiving the signals.")) {
            [unowned api] call in
            api.unsubscribe(call.sender)
            return []
        }
        try interface.addMethod("Silence", in: "s", documentation: .init(arguments: ["call_id"], """
            Stop the ring of a live incoming call (its call_id, or its Id property): no ring, no \
            vibration; if nobody answers, a quiet missed call. Says so with a screened event \
            (action silence, rule user). Errors: io.telwatch.Monitor1.Error.NoSuchCall, \
            io.telwatch.Monitor1.Error.NotRinging (outgoing, or answered), \
            io.telwatch.Monitor1.Error.NotPermitted (polkit's io.telwatch.answer-hangup). A call \
            that makes no sound already is left as it is.
            """), answeredLater: { [unowned api] call, reply in
            let callID = try call.decode(String.self)
            api.acts.silence(callID, reply: reply) { [weak api] in try api?.silence(callID: $0) }
        })
        try interface.addMethod("Dial", in: "ssa{sv}", out: "o", documentation: .init(arguments: ["number", "modem", "options", "call"], """
            Place a call to number on modem (its object path at its stack; "" for the only voice \
            modem), once the stack has started it: call is its io.telwatch.Call1 object ("/" if it \
            ended before telwatch saw it). The number is dial characters only and never an \
            emergency number. Errors (io.telwatch.Monitor1.Error.*): RefusedNumber, \
            EmergencyNumber, NoSuchModem, ModemAmbiguous, NotPermitted, StackRefused (the stack's \
            words), StackTimedOut, StackGone. options: requester, "api" or "cli".
            """), answeredLater: { [unowned api] call, reply in
            let values = try call.values()
            guard values.count == 3, let number = values[0].string, let modem = values[1].string else {
                throw DBusError.remote(name: MonitorNames.invalidArgsError, message: "Dial takes 'ssa{sv}'")
            }
            try api.acts.dial(number, modem: modem, options: values[2], reply: reply)
        })
        try interface.addSignal("Event", signature: "sa{sv}", documentation: .init(arguments: ["event", "fields"], """
            One event of telwatch's stream, exactly as its JSON line: event is its name (incoming, \
            connected, run-started…), fields every key of the line, in order, typed: s text, b \
            flag, x count, d seconds, t a moment in microseconds since the epoch, an empty array \
            (as, ad, at) for null.
            """))
        try interface.addProperty("LiveCalls", signature: "u", documentation: "The number of live calls.",
                                  get: { [unowned api] in api.liveCallCount })
        try interface.addProperty("Run", signature: "a{sv}", documentation: """
            The background run while one lives (run_id, reason, pid, started_at, holders, lock, \
            lease_expires_at); empty when none.
            """, get: { [unowned api] in api.runValue })
        try interface.addProperty("Backends", signature: "a{sa{sv}}", documentation: """
            Each stack telwatch has heard of (modemmanager, ofono): its status (appeared, synced, \
            vanished, absent, sync-refused, sync-failed), its owner's unique name, its voice modems \
            once synced.
            """, get: { [unowned api] in api.backendsValue })
        try interface.addProperty("LastSleep", signature: "a{sv}", documentation: """
            The last sleep and resume telwatch recorded (slept_at, resumed_at, asleep, overridden, \
            overrides, last_override_at, last_override_run, last_override_lock); empty when none.
            """, get: { [unowned api] in api.lastSleepValue })
        try interface.addProperty("Version", signature: "s", documentation: "telwatch's version.",
                                  get: { .string(version) })
        try interface.addProperty("StateDirectory", signature: "s", documentation: """
            The directory this telwatch keeps its run record and call history (history.db) in; \
            empty when it has none.
            """, get: { [unowned api] in .string(api.stateDirectory) })
        return interface
    }
}
