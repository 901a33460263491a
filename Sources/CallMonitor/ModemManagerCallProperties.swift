import DBus

/// What a Properties.GetAll or PropertiesChanged said about a call; nil = not said, or unusable.
struct ModemManagerCallProperties: Equatable {
    var state: ModemManagerStateValue?
    var reason: ModemManagerReasonValue?
    var direction: ModemManagerCallDirection?
    var number: String?
    var multiparty: Bool?

    init(state: ModemManagerCallState? = nil, reason: ModemManagerCallStateReason? = nil,
         direction: ModemManagerCallDirection? = nil, number: String? = nil, multiparty: Bool? = nil) {
        self.state = state.map(ModemManagerStateValue.init)
        self.reason = reason.map(ModemManagerReasonValue.init)
        self.direction = direction
        self.number = number
        self.multiparty = multiparty
    }

    /// Reads the properties telwatch uses from a `GetAll` answer (`a{sv}`); one of the wrong type
    /// or an unknown state is described in `problems` and left out, a huge number is cut
    /// (`CallText.cut`) and said; the others count. nil when the answer is no `a{sv}`.
    ///
    /// Read in place, as a `PropertiesChanged` is: the properties telwatch does not use (the audio
    /// format's own dictionary among them) are not decoded, and no dictionary is built, on every
    /// ring's path. They are applied in `used`'s order whatever the stack's, the last of a name
    /// said twice counting.
    init?(getAllAnswer answer: Message, problems: inout [String]) {
        guard var reader = answer.reader(checked: "a{sv}") else { return nil }
        var said = [DBusValue?](repeating: nil, count: Self.used.count)
        do {
            try reader.readProperties(last: true) { name, value in
                guard let slot = Self.used.firstIndex(of: name) else { return }
                said[slot] = try value.readValue()
            }
        } catch {
            return nil
        }
        for (slot, name) in Self.used.enumerated() {
            if let value = said[slot] { apply(name, value, problems: &problems) }
        }
    }

    /// The properties telwatch reads, in the order a listing's are applied.
    static let used = ["State", "StateReason", "Direction", "Number", "Multiparty"]

    /// Whether `name` is one telwatch reads: the others are not even decoded.
    static func isUsed(_ name: String) -> Bool {
        switch name {
        case "State", "StateReason", "Direction", "Number", "Multiparty": return true
        default: return false
        }
    }

    /// One property, as a `GetAll` listing or a `PropertiesChanged` carries it.
    mutating func apply(_ name: String, _ value: DBusValue, problems: inout [String]) {
        func int32() -> Int32? {
            guard let int = value.int32 else {
                problems.append("\(name) is not an int32 (\(CallText.clip(value.signature.rawValue)))")
                return nil
            }
            return int
        }
        switch name {
        case "State":
            state = int32().map(ModemManagerStateValue.init(raw:))
            if let state, state.known == nil { problems.append("unknown call state \(state.raw)") }
        case "StateReason": reason = int32().map(ModemManagerReasonValue.init(raw:))
        case "Direction": direction = int32().map(ModemManagerCallDirection.init(bus:))
        case "Number":
            if let number = value.string, CallText.fits(number) {
                self.number = number
            } else if let number = value.string {
                // Not a withheld caller: a number, too long to keep whole.
                self.number = CallText.cut(number)
                problems.append(CallText.cutProblem("Number", of: number))
            } else {
                problems.append("Number is not a string (\(value.signature.rawValue))")
            }
        case "Multiparty":
            multiparty = value.bool
            if multiparty == nil { problems.append("Multiparty is not a boolean (\(value.signature.rawValue))") }
        default:
            break
        }
    }

    /// Whether these are only the state and reason of a `StateChanged` just applied (ModemManager
    /// repeats them in a `PropertiesChanged` after every one).
    func repeats(_ stateChange: (state: ModemManagerStateValue, reason: UInt32)) -> Bool {
        guard direction == nil, number == nil, multiparty == nil, state == stateChange.state else { return false }
        return reason.map { UInt32(bitPattern: $0.raw) == stateChange.reason } ?? true
    }

    var isEmpty: Bool { self == ModemManagerCallProperties() }

    /// As tracker input; `direction` is the call's last known direction (it decides what
    /// WAITING and UNKNOWN mean) and is updated when these properties carry one.
    func observation(direction: inout ModemManagerCallDirection) -> CallObservation {
        if let newDirection = self.direction { direction = newDirection }
        return CallObservation(
            phase: state.map { ModemManagerMapping.phase(state: $0, direction: direction) },
            direction: self.direction.map(ModemManagerMapping.direction),
            number: number,
            multiparty: multiparty,
            reason: reason.map { ModemManagerMapping.reason($0) },
            everConnected: reason?.known?.impliesConnected == true ? true : nil)
    }
}
