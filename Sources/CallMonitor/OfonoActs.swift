// Acts on oFono's calls (docs/modem-stacks.md §13): VoiceCall.Answer, Hangup, Deflect;
// VoiceCallManager.HoldAndAnswer, HangupAll, SendTones and Dial.

import DBus

extension OfonoBackend: ActingBackend {
    var voiceModemPaths: [String] { modems.filter(\.value).map(\.key).sorted() }

    func actingModem(of call: CallSnapshot) -> String? { Self.modem(of: call) }

    func perform(_ act: CheckedAct, on call: CallSnapshot,
                 done: @escaping (Result<Void, CallActFailure>, Int) -> Void) {
        let path = call.key.path
        switch act {
        case .answer: actCall(path, OfonoBus.voiceCall, "Answer") { done($0.map { _ in () }, 0) }
        case .holdAndAnswer(let modem):
            // VoiceCall.Answer takes only an incoming call, never a waiting one.
            actCall(modem, OfonoBus.voiceCallManager, "HoldAndAnswer") { done($0.map { _ in () }, 0) }
        case .hangUp: actCall(path, OfonoBus.voiceCall, "Hangup") { done($0.map { _ in () }, 0) }
        case .deflect(let number):
            actCall(path, OfonoBus.voiceCall, "Deflect", [.string(number.value)]) { done($0.map { _ in () }, 0) }
        case .sendTones(let tones):
            // Tones go to the modem's VoiceCallManager, which sends them on its active call.
            let count = tones.value.unicodeScalars.count
            actCall(Self.modem(of: call), OfonoBus.voiceCallManager, "SendTones", [.string(tones.value)]) {
                done($0.map { _ in () }, $0.failure == nil ? count : 0)
            }
        }
    }

    func dial(_ number: DialString, modem: String, done: @escaping (Result<String, CallActFailure>) -> Void) {
        // "default": the network's setting for showing the caller's number.
        actCall(modem, OfonoBus.voiceCallManager, "Dial", [.string(number.value), .string("default")]) { result in
            switch result {
            case .failure(let failure): done(.failure(failure))
            case .success(let reply):
                guard let call = try? reply.decode(ObjectPath.self) else {
                    return done(.failure(.stackAnsweredOddly("Dial answered '\(reply.signature)'")))
                }
                done(.success(call.rawValue))
            }
        }
    }

    func hangUpAll(modem: String, done: @escaping (Result<Void, CallActFailure>) -> Void) {
        actCall(modem, OfonoBus.voiceCallManager, "HangupAll") { done($0.map { _ in () }) }
    }

    /// oFono names calls `<modem>/voicecallNN`: the modem of a call first seen through its own signal.
    static func modem(of call: CallSnapshot) -> String {
        if case .path(let modem) = call.modem { return modem }
        guard let slash = call.key.path.lastIndex(of: "/") else { return "" }
        return String(call.key.path[..<slash])
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
