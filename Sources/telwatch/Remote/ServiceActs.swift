import DBus
import MonitorAPI

/// The running service, asked to act over its API by `answer`, `hangup`, `deflect`, `tones` and
/// `dial`: the service acts (with its own checks of every number, and its stack's answer), this
/// only finds the call and says what came of it.
struct ServiceActs {
    /// The service waits for its stack up to 30 s (docs/modem-stacks.md §13); a little longer here,
    /// so the stack's timeout is the one told.
    static let timeout = 40.0

    let session: BusSession
    let owner: String
    let bus: BusAddress
    let command: String

    /// The service on `bus`, or why there is none to ask.
    static func open(_ bus: BusAddress, command: String) -> Result<ServiceActs, ActFailure> {
        let session: BusSession
        do { session = try BusSession(bus) } catch {
            return .failure(ActFailure(status: .busUnavailable, message: "\(command): cannot reach the \(bus) bus: \(error)"))
        }
        do {
            guard let owner = try ServiceView.owner(session.connection) else {
                session.connection.close()
                return .failure(ActFailure(status: .busUnavailable, message: ActFailure.noService(command, bus: bus)))
            }
            return .success(ServiceActs(session: session, owner: owner, bus: bus, command: command))
        } catch {
            session.connection.close()
            return .failure(ActFailure(error, command: command, bus: bus))
        }
    }

    func close() { session.connection.close() }

    func liveCalls() throws(ActFailure) -> [RemoteCall] {
        do { return try ServiceView.liveCalls(session.connection, owner: owner) } catch {
            throw ActFailure(error, command: command, bus: bus)
        }
    }

    /// Asks the service to do `act` to `call`; returns once the stack has answered.
    func perform(_ act: RemoteAct, on call: RemoteCall) throws(ActFailure) {
        do {
            _ = try session.connection.callBlocking(try act.message(to: owner, path: call.path), timeout: Self.timeout)
        } catch {
            throw ActFailure(error, command: command, bus: bus)
        }
    }

    /// Asks the service to dial `number` (on `modem`, or on its one voice modem); returns the
    /// new call's id.
    func dial(_ number: String, modem: String?) throws(ActFailure) -> String {
        let path: ObjectPath
        do {
            path = try session.connection.callBlocking(
                destination: owner, path: MonitorNames.path, interface: MonitorNames.interface, member: "Dial",
                number, modem ?? "", RemoteAct.options, timeout: Self.timeout).decode(ObjectPath.self)
        } catch {
            throw ActFailure(error, command: command, bus: bus)
        }
        return Self.callID(of: path)
    }

    /// A call object's path ends in its id without the dashes (docs/dbus-api.md): the id, dashes
    /// put back; anything else is told as the path it is.
    static func callID(of path: ObjectPath) -> String {
        let last = path.rawValue.split(separator: "/").last.map(String.init) ?? ""
        guard last.count == 32, last.allSatisfy(\.isHexDigit) else { return path.rawValue }
        var id = ""
        for (index, character) in last.enumerated() {
            if [8, 12, 16, 20].contains(index) { id.append("-") }
            id.append(character)
        }
        return id
    }
}
