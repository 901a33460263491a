// Acts on ModemManager's calls (docs/modem-stacks.md §13): Call.Accept, Hangup, Deflect,
// SendDtmf; Modem.Voice.HoldAndAccept, HangupAll, CreateCall, then Call.Start.

import DBus

extension ModemManagerBackend: ActingBackend {
    var voiceModemPaths: [String] { voiceModems.sorted() }

    /// ModemManager's call paths do not name the modem: a call first seen through its own signal
    /// is on the only voice modem, or on one that cannot be told.
    func actingModem(of call: CallSnapshot) -> String? {
        if case .path(let modem) = call.modem { return modem }
        return voiceModems.count == 1 ? voiceModems.first : nil
    }

    func perform(_ act: CheckedAct, on call: CallSnapshot,
                 done: @escaping (Result<Void, CallActFailure>, Int) -> Void) {
        var path = call.key.path
        var interface = ModemManagerBus.call
        let member: String
        var arguments: [DBusValue] = []
        switch act {
        case .answer: member = "Accept"
        case .holdAndAnswer(let modem):
            // Call.Accept takes only a call ringing in, never a waiting one.
            (path, interface, member) = (modem, ModemManagerBus.voice, "HoldAndAccept")
        case .hangUp: member = "Hangup"
        case .deflect(let number):
            member = "Deflect"
            arguments = [.string(number.value)]
        case .sendTones(let tones):
            return sendTones(Array(tones.value.unicodeScalars), sent: 0, on: path, done: done)
        }
        actCall(path, interface, member, arguments) { done($0.map { _ in () }, 0) }
    }

    func hangUpAll(modem: String, done: @escaping (Result<Void, CallActFailure>) -> Void) {
        actCall(modem, ModemManagerBus.voice, "HangupAll") { done($0.map { _ in () }) }
    }

    /// ModemManager 1.20 and 1.24 send only the first character a `SendDtmf` is given: one tone
    /// per call, each after the last one's answer, and none after a refusal.
    private func sendTones(_ tones: [Unicode.Scalar], sent: Int, on path: String,
                           done: @escaping (Result<Void, CallActFailure>, Int) -> Void) {
        guard sent < tones.count else { return done(.success(()), sent) }
        actCall(path, ModemManagerBus.call, "SendDtmf", [.string(String(tones[sent]))]) { [weak self] result in
            switch result {
            case .failure(let failure): done(.failure(failure), sent)
            case .success:
                guard let self else { return done(.failure(.stackGone), sent + 1) }
                self.sendTones(tones, sent: sent + 1, on: path, done: done)
            }
        }
    }

    /// A call `Start` refused is deleted again, so that it does not linger as an unstarted call.
    func dial(_ number: DialString, modem: String, done: @escaping (Result<String, CallActFailure>) -> Void) {
        let properties = DBusValue.dictionary(keySignature: "s", valueSignature: "v", [
            .init(.string("number"), .variant(.string(number.value))),
        ])
        actCall(modem, ModemManagerBus.voice, "CreateCall", [properties]) { [weak self] created in
            let reply: Message
            switch created {
            case .failure(let failure): return done(.failure(failure))
            case .success(let message): reply = message
            }
            guard let call = try? reply.decode(ObjectPath.self) else {
                return done(.failure(.stackAnsweredOddly("CreateCall answered '\(reply.signature)'")))
            }
            guard let self else { return done(.failure(.stackGone)) }
            self.actCall(call.rawValue, ModemManagerBus.call, "Start") { [weak self] started in
                switch started {
                case .success: done(.success(call.rawValue))
                case .failure(let failure):
                    self?.actCall(modem, ModemManagerBus.voice, "DeleteCall", [.objectPath(call)]) { _ in }
                    done(.failure(failure))
                }
            }
        }
    }
}
