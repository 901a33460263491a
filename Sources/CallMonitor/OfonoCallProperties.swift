import DBus

/// What oFono said about a call in a CallAdded or GetCalls entry; nil = not said, or unusable.
struct OfonoCallProperties: Equatable {
    var state: String?
    var number: String?
    var name: String?
    var multiparty: Bool?

    init(state: String? = nil, number: String? = nil, name: String? = nil, multiparty: Bool? = nil) {
        self.state = state
        self.number = number
        self.name = name
        self.multiparty = multiparty
    }

    /// Reads the properties telwatch uses; an unusable one is described in `problems` and left out,
    /// a number or name too long is cut (`CallText.cut`) and said.
    init(_ map: PropertyMap, problems: inout [String]) {
        for (key, value) in map { apply(key, value.value, problems: &problems) }
    }

    /// One property, as `PropertyChanged(s, v)` carries it; others than ours are ignored.
    mutating func apply(_ key: String, _ value: DBusValue, problems: inout [String]) {
        func text(_ what: String) -> String? {
            guard let string = value.string else {
                problems.append("\(what) is not a string (\(CallText.clip(value.signature.rawValue)))")
                return nil
            }
            guard CallText.fits(string) else {
                // A caller too long to keep whole is still no withheld one.
                problems.append(CallText.cutProblem(what, of: string))
                return what == "State" ? nil : CallText.cut(string)
            }
            return string
        }
        switch key {
        case "State":
            state = text("State")
            if let state, !OfonoBus.knownStates.contains(state) {
                problems.append("unknown call state '\(CallText.clip(state, 40))'")
            }
        case "LineIdentification": number = text("LineIdentification")
        case "Name": name = text("Name")
        case "Multiparty":
            multiparty = value.bool
            if multiparty == nil { problems.append("Multiparty is not a boolean (\(value.signature.rawValue))") }
        default: break
        }
    }

    /// oFono has no direction: the tracker infers it from the first state it sees.
    var observation: CallObservation {
        CallObservation(phase: state.map(OfonoMapping.phase), number: number, name: name, multiparty: multiparty)
    }
}
