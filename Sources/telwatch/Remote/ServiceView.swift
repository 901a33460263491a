import BGRunManager
import CallMonitor
import DBus
import MonitorAPI

/// The running service's view, read over its API: what `telwatch status` shows when a service
/// runs, so that it tells the same ids and durations as the service's events.
struct ServiceView {
    let owner: String
    let pid: UInt32?
    let version: String
    /// Each stack the service heard of, with its status in words.
    let backends: [(name: String, state: String)]
    let calls: [CallSnapshot]
    let run: RunRecord?
    let sleep: SleepRecord?

    /// The view, or nil when nobody owns the API's name on this bus.
    static func read(_ connection: Connection, now: Double) throws -> ServiceView? {
        guard let owner = try owner(connection) else { return nil }
        let pid = try? connection.callBlocking(
            destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
            member: "GetConnectionUnixProcessID", owner, timeout: 5).decode(UInt32.self)
        // Asked of the owner found, so both answers come from the same service.
        let properties = try connection.callBlocking(
            destination: owner, path: MonitorNames.path, interface: BusDaemon.propertiesInterface, member: "GetAll",
            MonitorNames.interface, timeout: 5).decode([String: Variant].self)
        let calls = try liveCalls(connection, owner: owner).map(\.call)
        return ServiceView(
            owner: owner, pid: pid, version: properties["Version"]?.value.string ?? "?",
            backends: backends(APIFields(properties["Backends"]?.value)), calls: calls,
            run: run(APIFields(properties["Run"]?.value), now: now), sleep: sleep(APIFields(properties["LastSleep"]?.value)))
    }

    /// The unique name of the service that owns the API's name, or nil when none does.
    static func owner(_ connection: Connection) throws -> String? {
        do {
            return try connection.callBlocking(
                destination: BusDaemon.name, path: BusDaemon.path, interface: BusDaemon.interface,
                member: "GetNameOwner", MonitorNames.busName, timeout: 5).decode(String.self)
        } catch DBusError.remote(name: "org.freedesktop.DBus.Error.NameHasNoOwner", _) {
            return nil
        }
    }

    /// The live calls of the service `owner`, each with its object, first seen first.
    static func liveCalls(_ connection: Connection, owner: String) throws -> [RemoteCall] {
        let objects = try connection.callBlocking(
            destination: owner, path: MonitorNames.path, interface: BusDaemon.objectManagerInterface,
            member: "GetManagedObjects", timeout: 5).decode([ObjectPath: [String: [String: Variant]]].self)
        return objects.compactMap { path, interfaces in
            interfaces[MonitorNames.callInterface].flatMap(call).map { RemoteCall(path: path, call: $0) }
        }.sorted { $0.call.firstSeen < $1.call.firstSeen }
    }

    private static func backends(_ fields: APIFields) -> [(name: String, state: String)] {
        fields.entries.map { name, value in
            let backend = APIFields(value)
            let state: String
            switch backend.text("status").flatMap(BackendStatus.init(rawValue:)) {
            case .synced:
                let modems = backend.count("modems")
                state = "\(modems) voice modem\(modems == 1 ? "" : "s")"
            case .appeared: state = "running, being read"
            case .absent: state = "not running"
            case .vanished: state = "stopped"
            case .syncRefused: state = "listing refused"
            case .syncFailed: state = "listing failed"
            case nil: state = "unknown"
            }
            return (name, state)
        }
    }

    /// A call from its `io.telwatch.Call1` properties.
    private static func call(_ properties: [String: Variant]) -> CallSnapshot? {
        func text(_ name: String) -> String { properties[name]?.value.string ?? "" }
        func flag(_ name: String) -> Bool { properties[name]?.value.bool ?? false }
        guard let backend = BackendKind(rawValue: text("Backend")), let state = CallState(rawValue: text("State")),
              let firstSeen = properties["FirstSeen"]?.value.uint64 else { return nil }
        let connectedAt = properties["ConnectedAt"]?.value.uint64 ?? 0
        return CallSnapshot(
            id: text("Id"), key: CallKey(backend: backend, path: text("StackPath")), modem: ModemPath(text("Modem")),
            modemIdentity: ModemIdentity(equipmentID: text("ModemId"), ownNumber: text("ModemNumber"),
                                         operatorName: text("Operator")),
            direction: CallDirection(rawValue: text("Direction")) ?? .unknown, number: text("Number"),
            name: text("Name"), state: state, detail: CallDetail(rawValue: text("Detail")),
            multiparty: flag("Multiparty"), initial: flag("Initial"),
            firstSeen: APIFields.seconds(microseconds: firstSeen),
            connectedAt: connectedAt == 0 ? nil : APIFields.seconds(microseconds: connectedAt))
    }

    private static func run(_ fields: APIFields, now: Double) -> RunRecord? {
        guard let id = fields.text("run_id"), let startedAt = fields.time("started_at") else { return nil }
        return RunRecord(runID: id, reason: fields.text("reason") ?? "", pid: Int32(clamping: fields.count("pid")),
                         startedAt: startedAt, updatedAt: now, holders: fields.count("holders"), lease: nil,
                         leaseExpiresAt: fields.time("lease_expires_at"),
                         lock: fields.text("lock").flatMap(LockState.init(rawValue:)) ?? .off, wakelock: nil)
    }

    private static func sleep(_ fields: APIFields) -> SleepRecord? {
        guard !fields.isEmpty else { return nil }
        return SleepRecord(sleptAt: fields.time("slept_at"), resumedAt: fields.time("resumed_at"),
                           lastSleepOverridden: fields.flag("overridden"), overrides: fields.count("overrides"),
                           lastOverrideAt: fields.time("last_override_at"),
                           lastOverrideRun: fields.text("last_override_run"),
                           lastOverrideLock: fields.text("last_override_lock").flatMap(LockState.init(rawValue:)))
    }
}
