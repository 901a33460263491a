import CallMonitor
import Contacts
import DBus
import Loop
import Pipeline

/// Which phone actions are on, and the session bus they talk on.
public struct PhoneActionSettings: Equatable, Sendable {
    /// Ring through feedbackd while a call rings; a short feedback for a missed call.
    public var feedback = false
    /// Call audio mode through callaudiod while a call is connected.
    public var callAudio = false
    /// A notification for each missed call.
    public var notify = false
    /// The phone user's session bus; `.session` is `DBUS_SESSION_BUS_ADDRESS`.
    public var bus = BusAddress.session

    public init() {}

    public var isAnyOn: Bool { feedback || callAudio || notify }
}

/// The built-in phone actions (docs/phone-actions.md): one sink that turns call events into
/// calls to the phone session's services on the *session* bus, a second connection on the same
/// loop as the stacks' system bus. Each action is off unless enabled; a service that is absent
/// or refuses costs one line, and the others go on; a service that appears later is used from
/// then on. The session bus itself going away turns the actions off, not telwatch.
public final class PhoneActions: EventSink {
    private let connection: Connection
    private let services: [SessionService]
    private let feedback: FeedbackAction?
    private let callAudio: CallAudioAction?
    private let notify: NotifyAction?
    /// The phone's dialer (GNOME Calls), followed whenever a phone action is on.
    private let dialer: DialerAction

    /// Connects to the session bus and starts following the services; nil (after one line) when
    /// the bus cannot be reached, or no action is on.
    /// `contacts`: names for numbers (`--contacts`), for the notifications.
    public static func start(settings: PhoneActionSettings, loop: EventLoop, contacts: ContactDirectory? = nil,
                             report: @escaping (String) -> Void) -> PhoneActions? {
        guard settings.isAnyOn else { return nil }
        do {
            return try PhoneActions(settings: settings, loop: loop, contacts: contacts, report: report)
        } catch {
            report("phone actions: off: \(error) (the actions need the phone user's session bus: "
                   + "run telwatch in that session, or give --session-bus ADDRESS)")
            return nil
        }
    }

    private init(settings: PhoneActionSettings, loop: EventLoop, contacts: ContactDirectory?,
                 report: @escaping (String) -> Void) throws {
        connection = try Connection(settings.bus, loop: loop)
        connection.onWarning = { report("phone actions: " + $0) }
        let connection = self.connection
        func service(_ action: String, _ name: String, _ path: String, _ interface: String) throws -> SessionService {
            try SessionService(action: action, name: name, path: path, interface: interface, connection: connection,
                               report: report)
        }
        let feedbackService = settings.feedback
            ? try service("feedback", "org.sigxcpu.Feedback", "/org/sigxcpu/Feedback", "org.sigxcpu.Feedback") : nil
        let callAudioService = settings.callAudio
            ? try service("call-audio", "org.mobian_project.CallAudio", "/org/mobian_project/CallAudio",
                          "org.mobian_project.CallAudio") : nil
        let notifyService = settings.notify
            ? try service("notify", "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                          "org.freedesktop.Notifications") : nil
        feedback = feedbackService.map(FeedbackAction.init)
        callAudio = callAudioService.map(CallAudioAction.init)
        notify = notifyService.map { NotifyAction(service: $0, contactName: { contacts?.name(for: $0) }) }
        let dialerService = try SessionService(
            action: "dialer", name: DialerAction.name, path: DialerAction.root, interface: BusDaemon.objectManagerInterface,
            connection: connection, startsService: false, report: report)
        let dialer = DialerAction(service: dialerService)
        self.dialer = dialer
        feedback?.standsAside = { dialer.isPresent }
        notify?.standsAside = { dialer.isPresent }
        dialer.onPresenceChanged = { [weak feedback] in feedback?.refresh() }
        services = [feedbackService, callAudioService, notifyService, dialerService].compactMap { $0 }
        for service in services { try service.start() }
        feedback?.start()
        notify?.start()
        dialer.start()
        connection.onDisconnect = { [weak self] in
            report("phone actions: lost the session bus; the actions are off until telwatch restarts")
            self?.services.forEach { $0.stop() }
        }
    }

    /// Asked for screening's word on a call (the action the phone takes now): a call screening
    /// holds back never rings, and its missed call is quiet or not notified.
    public weak var session: SinkSession? {
        didSet {
            let screening: (String) -> ScreeningAction? = { [weak session] in session?.screening(of: $0) }
            feedback?.screening = screening
            notify?.screening = screening
        }
    }

    public func receive(_ event: PipelineEvent, liveCalls: Int) {
        dialer.receive(event)
        if case .screened(let screened, _) = event { feedback?.screened(screened.call.id, rings: screened.action.rings) }
        guard case .calls(let events, _) = event else { return }
        for event in events {
            feedback?.receive(event)
            callAudio?.receive(event)
            notify?.receive(event)
        }
    }

    /// Ends the ring and says goodbye to the session bus (what is queued is flushed). The call
    /// audio is left as it is: the call itself goes on without telwatch.
    public func finish(then done: @escaping () -> Void) {
        feedback?.stop()
        services.forEach { $0.stop() }
        connection.close()
        done()
    }
}
