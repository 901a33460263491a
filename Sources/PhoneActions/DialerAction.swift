import CallMonitor
import DBus
import Pipeline

/// The phone's own dialer on the session bus (GNOME Calls, `org.gnome.Calls`, docs/phones.md).
/// It follows the same calls as telwatch and rings and notifies for each: while it runs, telwatch's
/// own ring and missed-call notifications stand aside (`isPresent`), and a call screening holds
/// quiet (silence, ignore, a reject being hung up) is silenced in the dialer too, through its own
/// API (`org.gnome.Calls.Call.Silence`, what phosh-antispam uses). GNOME Calls holds back its ring
/// for 100 ms after a call comes, and telwatch decides within a few: a call silenced before the
/// ring starts never rings. A reject is silenced too: a modem slow to hang up (150 ms) would
/// otherwise ring for the difference; one the stack ended first makes GNOME Calls log a failed
/// assertion for a call no longer ringing, and nothing else. Its call objects are followed only through the signals its object
/// manager sends when a call comes or goes: nothing is read or sent while no call rings.
final class DialerAction {
    static let name = "org.gnome.Calls"
    static let root = "/org/gnome/Calls"
    static let callInterface = "org.gnome.Calls.Call"

    private let service: SessionService
    /// The dialer's inbound calls by object path: the caller's id as the dialer has it.
    private var calls: [ObjectPath: String] = [:]
    /// Calls screening holds quiet, by telwatch's call id: their number ("" for a caller without one).
    private var quiet: [String: String] = [:]
    /// Dialer calls already asked to be silent.
    private var silenced: Set<ObjectPath> = []
    static let limit = 64
    /// The dialer came or went: the other actions stand aside, or ring and notify again.
    var onPresenceChanged: (() -> Void)?

    init(service: SessionService) {
        self.service = service
        service.onAppeared = { [weak self] in
            self?.list()
            self?.onPresenceChanged?()
        }
        service.onVanished = { [weak self] in
            self?.calls.removeAll()
            self?.silenced.removeAll()
            self?.onPresenceChanged?()
        }
    }

    /// Whether a dialer runs in the session: telwatch's ring and notifications stand aside.
    var isPresent: Bool { service.isPresent }

    func start() {
        service.subscribe(member: "InterfacesAdded") { [weak self] message in
            guard let self else { return }
            guard let (path, interfaces) = try? message.decode(ObjectPath.self, [String: PropertyMap].self) else {
                return self.service.malformed("InterfacesAdded", message, expected: "oa{sa{sv}}")
            }
            self.added(path, interfaces)
        }
        service.subscribe(member: "InterfacesRemoved") { [weak self] message in
            guard let self else { return }
            guard let (path, _) = try? message.decode(ObjectPath.self, [String].self) else {
                return self.service.malformed("InterfacesRemoved", message, expected: "oas")
            }
            self.calls.removeValue(forKey: path)
            self.silenced.remove(path)
        }
    }

    /// The dialer's calls live when it appears (telwatch started beside a ringing call).
    private func list() {
        service.call("GetManagedObjects", []) { [weak self] result in
            guard let self else { return }
            let reply: Message
            switch result {
            case .success(let answer): reply = answer
            case .failure(.disconnected): return
            case .failure(let error): return self.service.failed("the dialer did not list its calls: \(error)")
            }
            guard let objects = try? reply.decode([ObjectPath: [String: PropertyMap]].self) else {
                return self.service.malformed("GetManagedObjects' reply", reply, expected: "a{oa{sa{sv}}}")
            }
            for (path, interfaces) in objects { self.added(path, interfaces) }
        }
    }

    private func added(_ path: ObjectPath, _ interfaces: [String: PropertyMap]) {
        guard let properties = interfaces[Self.callInterface],
              case .bool(true)? = properties["Inbound"]?.value.unwrapped else { return }
        var id = ""
        if case .string(let text)? = properties["Id"]?.value.unwrapped { id = text }
        guard calls.count < Self.limit else { return }
        calls[path] = id
        silenceMatching()
    }

    func receive(_ event: PipelineEvent) {
        switch event {
        case .screened(let screened, _):
            if screened.action.rings {
                quiet.removeValue(forKey: screened.call.id)
            } else if quiet.count < Self.limit {
                quiet[screened.call.id] = screened.call.number
                silenceMatching()
            }
        case .calls(let events, _):
            for event in events {
                switch event {
                case .transition(let call, _) where call.state != .incoming:
                    quiet.removeValue(forKey: call.id)
                case .idle:
                    quiet.removeAll()
                default:
                    break
                }
            }
        default:
            break
        }
    }

    /// Silences each dialer call whose caller is one screening holds quiet: the same number as
    /// the stack gave both, or no number on either side (a withheld caller).
    private func silenceMatching() {
        guard !quiet.isEmpty, service.isPresent else { return }
        let numbers = Set(quiet.values)
        for (path, id) in calls where !silenced.contains(path) && numbers.contains(id) {
            silenced.insert(path)
            service.call("Silence", on: path, interface: Self.callInterface) { [weak self] result in
                switch result {
                case .success: self?.service.worked()
                case .failure(.disconnected): break
                case .failure(let error): self?.service.failed("GNOME Calls did not silence a screened call: \(error)")
                }
            }
        }
    }
}
