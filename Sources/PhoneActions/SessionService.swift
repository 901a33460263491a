import DBus
import Loop

/// One phone-session service an action talks to (feedbackd, callaudiod, the notification
/// server), followed by name: whether it is there, and its calls addressed to its current owner.
/// What a user should hear about it (absent at start, gone, back) is one line each through
/// `report`; the action is told when an owner appears, so it can put back what it wants.
final class SessionService {
    /// What the user calls it in messages, e.g. `feedback: feedbackd (org.sigxcpu.Feedback)`.
    let action: String
    let name: String
    let path: ObjectPath
    let interface: String
    /// Asked of the bus (D-Bus activation) when absent; a dialer is only followed, never started.
    private let startsService: Bool
    private let connection: Connection
    private let report: (String) -> Void
    private var watch: NameOwnerWatch?
    /// Said once while the service stays away, so a service that never comes costs one line.
    private var absenceReported = false
    /// A refusal was said and nothing has worked since: a service that refuses every call costs
    /// one line, not one per call.
    private var failureReported = false
    /// Members whose signal or reply came in a shape other than the service's, said once each.
    private var malformedSaid: Set<String> = []
    /// Calls built once for the current owner, by the caller's key: libdbus rewrites a message's
    /// signature header for every argument appended, which made building a call most of what an
    /// action cost (bench/README.md, figure 9); a message already sent is copied by
    /// `Connection.call`, so the same one can be sent again while the owner stays.
    private var prepared: [String: Message] = [:]
    /// A method of this service may take this long before it counts as not answering.
    static let callTimeout = 5.0

    /// The owner appeared (at start or later): calls now reach it.
    var onAppeared: (() -> Void)?
    /// The owner went away: what it held (a ring, a notification) went with it.
    var onVanished: (() -> Void)?

    init(action: String, name: String, path: String, interface: String, connection: Connection,
         startsService: Bool = true, report: @escaping (String) -> Void) throws {
        self.startsService = startsService
        self.action = action
        self.name = name
        self.path = try ObjectPath(path)
        self.interface = interface
        self.connection = connection
        self.report = report
    }

    var owner: String? { watch?.owner }
    var isPresent: Bool { owner != nil }

    func start() throws {
        guard watch == nil else { return }
        watch = try connection.watchName(name) { [weak self] event in self?.ownerChanged(event) }
    }

    private func ownerChanged(_ event: NameOwnerEvent) {
        prepared.removeAll()
        guard startsService else {
            if case .appeared = event { onAppeared?() } else if case .vanished = event { onVanished?() }
            return
        }
        switch event {
        case .absent:
            activate { [weak self] in
                guard let self, !self.isPresent else { return }
                self.say("\(self.name) is not on the session bus; \(self.action) starts when it appears")
                self.absenceReported = true
            }
        case .vanished:
            onVanished?()
            if !absenceReported { say("\(name) left the session bus; \(action) resumes when it is back") }
            absenceReported = true
            activate {}
        case .appeared:
            if absenceReported { say("\(name) is on the session bus again") }
            absenceReported = false
            failureReported = false
            onAppeared?()
        }
    }

    /// Asks the bus to start the service, as a phone session's bus does for feedbackd and
    /// callaudiod (D-Bus activation): telwatch calls only a present owner, so nothing else would
    /// start one that is activatable but not running. `otherwise` runs when the bus cannot start
    /// it (not activatable, or it failed); once started, the name appears as any owner does.
    private func activate(otherwise: @escaping () -> Void) {
        do {
            let start = try Message.methodCall(destination: BusDaemon.name, path: BusDaemon.path,
                                               interface: BusDaemon.interface, member: "StartServiceByName")
            try start.append(name, UInt32(0))
            connection.call(start, timeout: Self.callTimeout) { result in
                if case .failure = result { otherwise() }
            }
        } catch {
            otherwise()
        }
    }

    /// A signal of this service, believed only from its current owner.
    func subscribe(member: String, _ handler: @escaping (Message) -> Void) {
        guard let watch else { return }
        connection.subscribe(
            MatchRule(sender: name, path: path.rawValue, interface: interface, member: member), owner: watch,
            handler)
    }

    /// Calls a method of the current owner without blocking; nothing is sent while it is absent
    /// (`reply` gets nothing then: the action puts its wish back when the owner appears).
    /// With `reuse`, a call with the same key and the same arguments is built once per owner.
    func call(_ member: String, _ arguments: [DBusValue], reuse key: String? = nil,
              reply: ((Result<Message, DBusError>) -> Void)? = nil) {
        guard let owner else { return }
        do {
            let message: Message
            if let key, let built = prepared[key] {
                message = built
            } else {
                message = try Message.methodCall(destination: owner, path: path, interface: interface, member: member)
                try message.append(values: arguments)
                if let key { prepared[key] = message }
            }
            connection.call(message, timeout: Self.callTimeout) { result in reply?(result) }
        } catch {
            say("cannot build \(member) (\(error))")
        }
    }

    /// Calls a method of another object of the current owner (a dialer's call object), without
    /// blocking; nothing is sent while it is absent.
    func call(_ member: String, on path: ObjectPath, interface: String,
              reply: ((Result<Message, DBusError>) -> Void)? = nil) {
        guard let owner else { return }
        do {
            let message = try Message.methodCall(destination: owner, path: path, interface: interface, member: member)
            connection.call(message, timeout: Self.callTimeout) { result in reply?(result) }
        } catch {
            say("cannot build \(member) (\(error))")
        }
    }

    /// Reads a string property of this service's interface from its current owner without
    /// blocking; `reply` gets nil when it is absent, the read fails or the value is no string.
    func readString(_ property: String, reply: @escaping (String?) -> Void) {
        guard let owner else { return reply(nil) }
        do {
            let message = try Message.methodCall(destination: owner, path: path, interface: BusDaemon.propertiesInterface,
                                                 member: "Get")
            try message.append(interface, property)
            connection.call(message, timeout: Self.callTimeout) { result in
                guard case .success(let answer) = result, let value = try? answer.decode(Variant.self),
                      case .string(let text) = value.value.unwrapped else { return reply(nil) }
                reply(text)
            }
        } catch {
            reply(nil)
        }
    }

    /// One line on stderr, under the action's name.
    func say(_ message: String) { report(action + ": " + message) }

    /// A call refused, unanswered or answered with a failure: one line, then nothing more until
    /// a call works (`worked`) or a new owner appears. A lost bus is no refusal: not said here.
    func failed(_ message: String) {
        guard !failureReported else { return }
        failureReported = true
        say(message + "; said once until it works again")
    }

    func worked() { failureReported = false }

    /// A signal or reply that is not of the shape this service sends (another version of it, or
    /// something else owning its name): not used, and said once per member, so a service that
    /// always sends it so costs one line.
    func malformed(_ member: String, _ message: Message, expected signature: String) {
        guard malformedSaid.insert(member).inserted else { return }
        say("\(member) came as '\(message.signature)', not '\(signature)': not used (said once)")
    }

    func stop() {
        watch?.cancel()
        watch = nil
    }
}
