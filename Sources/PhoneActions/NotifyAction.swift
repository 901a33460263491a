import CallMonitor
import Contacts
import DBus
import Glibc
import Pipeline

/// `--notify`: a missed call becomes a desktop notification (`org.freedesktop.Notifications`,
/// docs/phone-actions.md): the contact's name or the number, the time it rang, category
/// `call.missed`. A number's next missed call replaces its notification; its next answered
/// call withdraws it.
final class NotifyAction {
    private let service: SessionService
    /// The notification shown for each number, oldest first; bounded.
    private var shown: [(number: String, id: UInt32)] = []
    static let shownLimit = 64
    /// Notifications sent and not answered yet; past the limit a missed call is not shown (said
    /// once), so a storm of missed calls cannot pile up calls to a slow server.
    private var waiting = 0
    static let waitingLimit = 16

    init(service: SessionService) {
        self.service = service
        // Its notifications went with it.
        service.onVanished = { [weak self] in self?.shown.removeAll() }
    }

    func start() {
        service.subscribe(member: "NotificationClosed") { [weak self] message in
            guard let self else { return }
            guard let (id, _) = try? message.decode(UInt32.self, UInt32.self) else {
                return self.service.malformed("NotificationClosed", message, expected: "uu")
            }
            self.shown.removeAll { $0.id == id }
        }
    }

    /// `contact`: the number's contact (`--contacts`), which wins over the name the network sent.
    func receive(_ event: TrackerEvent, contact: String?) {
        switch event {
        case .missed(let call):
            // The dialer notifies every missed call itself (docs/phones.md): one is enough.
            guard !standsAside() else { return }
            switch screening(call.id) {
            case .reject?, .deflect?, .ignore?: break
            case .silence?: notify(call, name: contact ?? call.name, quiet: true)
            case .allow?, nil: notify(call, name: contact ?? call.name, quiet: false)
            }
        case .transition(let call, _) where call.state == .connected:
            guard Self.isIdentified(call.number), let index = shown.firstIndex(where: { ContactBook.sameNumber($0.number, call.number) }) else {
                return
            }
            let id = shown.remove(at: index).id
            service.call("CloseNotification", [.uint32(id)]) { [weak self] result in
                switch result {
                case .success: self?.service.worked()
                case .failure(.disconnected): break
                case .failure(let error):
                    self?.service.failed("the notification server did not withdraw notification \(id): \(error)")
                }
            }
        default:
            break
        }
    }

    /// A number that tells one caller from another (not unknown, not withheld).
    static func isIdentified(_ number: String) -> Bool { !number.isEmpty && number != "withheld" }

    /// A dialer runs in the session and notifies missed calls itself.
    var standsAside: () -> Bool = { false }

    /// Screening's word on a call: nil when no rule spoke of it.
    var screening: (String) -> ScreeningAction? = { _ in nil }

    /// `quiet`: a call screening silenced is noted without a sound and at low urgency.
    private func notify(_ call: CallSnapshot, name: String, quiet: Bool) {
        guard waiting < Self.waitingLimit else {
            return service.failed("\(Self.waitingLimit) notifications are still unanswered; a missed call is not shown")
        }
        let number = call.number
        let replaces = Self.isIdentified(number) ? shown.first(where: { ContactBook.sameNumber($0.number, number) })?.id ?? 0 : 0
        var hints: PropertyMap = ["category": Variant("call.missed"), "urgency": Variant(UInt8(quiet ? 0 : 1))]
        if quiet { hints["suppress-sound"] = Variant(true) }
        let arguments: [DBusValue] = [
            .string("telwatch"), .uint32(replaces), .string("call-missed-symbolic"),
            .string("Missed call"), .string(Self.body(call, name: name)),
            [String]().dbusValue, hints.dbusValue, .int32(-1),
        ]
        waiting += 1
        service.call("Notify", arguments) { [weak self] result in
            guard let self else { return }
            self.waiting -= 1
            switch result {
            case .success(let reply):
                self.service.worked()
                // Without its id the notification cannot be replaced or withdrawn later.
                guard let id = try? reply.decode(UInt32.self) else {
                    return self.service.malformed("Notify's reply", reply, expected: "u")
                }
                guard Self.isIdentified(number) else { return }
                self.shown.removeAll { ContactBook.sameNumber($0.number, number) }
                self.shown.append((number, id))
                if self.shown.count > Self.shownLimit { self.shown.removeFirst() }
            case .failure(let error):
                if error != .disconnected { self.service.failed("the notification server refused a missed call: \(error)") }
            }
        }
    }

    /// `NAME (NUMBER) at HH:MM`, or the number alone; escaped for the markup a notification body
    /// may be read as, and with control characters written out: a caller id is the network's.
    static func body(_ call: CallSnapshot, name: String) -> String {
        let number: String
        switch call.number {
        case "": number = "unknown number"
        case "withheld": number = "withheld number"
        default: number = call.number
        }
        let who = name.isEmpty ? number : name + " (" + number + ")"
        return escaped(who) + " at " + localTime(call.firstSeen)
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case _ where scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `HH:MM` in local time.
    static func localTime(_ time: Double) -> String {
        var seconds = time_t(time)
        var parts = tm()
        localtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return two(parts.tm_hour) + ":" + two(parts.tm_min)
    }
}
