// Acts on calls, one implementation for both stacks (docs/modem-stacks.md §13). Everything a
// caller gives is checked here, before any stack sees it.

extension CallMonitor {
    /// Does `act` to the live call `key`; `done` runs once, on the loop thread: at once when the
    /// act is refused here, else when the stack has answered (or has gone away meanwhile).
    public func act(_ act: CallAct, on key: CallKey, done: @escaping (CallActReport) -> Void) {
        guard isRunning, let backend = actingBackend(key.backend) else { return done(CallActReport(.failure(.stackGone))) }
        guard let call = liveCalls.first(where: { $0.key == key }) else {
            return done(CallActReport(.failure(.noSuchCall)))
        }
        if act.needsRinging && call.state != .incoming {
            return done(CallActReport(.failure(.notRinging(call.state))))
        }
        let checked: CheckedAct
        var held: [CallKey] = []
        switch act {
        case .answer where call.detail == .waiting:
            // A call that waits is answered by the modem's own hold-and-answer: the stacks refuse
            // their per-call answer for it (docs/modem-stacks.md §13).
            guard let modem = backend.actingModem(of: call) else { return done(CallActReport(.failure(.noSuchModem))) }
            checked = .holdAndAnswer(modem: modem)
            held = liveCalls.filter { other in
                other.key.backend == key.backend && other.key != key && other.detail == .active
                    && backend.actingModem(of: other) == modem
            }.map(\.key)
        case .answer: checked = .answer
        case .hangUp: checked = .hangUp
        case .deflect(let raw):
            switch dialable(raw) {
            case .success(let number): checked = .deflect(number)
            case .failure(let failure): return done(CallActReport(.failure(failure)))
            }
        case .sendTones(let raw):
            do {
                checked = .sendTones(try DialString(tones: raw))
            } catch {
                return done(CallActReport(.failure(.refusedNumber(error))))
            }
        }
        let started = noticeClock()
        let clock = noticeClock
        let answer = actsInFlight.begin(on: key.backend, gone: (Result<Void, CallActFailure>.failure(.stackGone), 0)) {
            result, tones in
            let heldNow = (try? result.get()) == nil ? [] : held
            done(CallActReport(result.map { key }, elapsed: clock() - started, tonesSent: tones, held: heldNow))
        }
        backend.perform(checked, on: call) { answer(($0, $1)) }
    }

    /// Places a call to `number` on `modem` of `stack` (either may be left out when only one
    /// voice modem would do); `done` gets the new call's key, once, as for `act`. The call itself
    /// reaches the tracker (and `onEvents`) from the stack's own signals, as any call does.
    public func dial(_ number: String, modem: String? = nil, stack: BackendKind? = nil,
                     done: @escaping (CallActReport) -> Void) {
        guard isRunning else { return done(CallActReport(.failure(.stackGone))) }
        let checked: DialString
        switch dialable(number) {
        case .success(let dialString): checked = dialString
        case .failure(let failure): return done(CallActReport(.failure(failure)))
        }
        let choices = backends.compactMap { $0 as? ActingBackend }.filter { stack == nil || $0.kind == stack }
            .flatMap { backend in backend.voiceModemPaths.filter { modem == nil || $0 == modem }.map { (backend, $0) } }
        guard choices.count == 1, let (backend, path) = choices.first else {
            return done(CallActReport(.failure(modem != nil ? .noSuchModem : .modemAmbiguous(count: choices.count))))
        }
        let kind = backend.kind
        let started = noticeClock()
        let clock = noticeClock
        let answer = actsInFlight.begin(on: kind, gone: Result<String, CallActFailure>.failure(.stackGone)) { result in
            done(CallActReport(result.map { CallKey(backend: kind, path: $0) }, elapsed: clock() - started))
        }
        backend.dial(checked, modem: path, done: answer)
    }

    /// Hangs up the calls of `modem` of `stack` (either left out: every voice modem that matches)
    /// with the stack's own hang-up-all, one modem after another, stopping at the first refusal;
    /// `done` runs once, as for `act`.
    public func hangUpAll(modem: String? = nil, stack: BackendKind? = nil,
                          done: @escaping (HangUpAllReport) -> Void) {
        guard isRunning else { return done(HangUpAllReport(.failure(.stackGone))) }
        let targets = backends.compactMap { $0 as? ActingBackend }.filter { stack == nil || $0.kind == stack }
            .flatMap { backend in backend.voiceModemPaths.filter { modem == nil || $0 == modem }.map { (backend, $0) } }
        guard !targets.isEmpty else { return done(HangUpAllReport(.failure(.noSuchModem))) }
        let started = noticeClock()
        let clock = noticeClock
        hangUpAll(targets[...], hungUp: []) { done(HangUpAllReport($0, elapsed: clock() - started)) }
    }

    private func hangUpAll(_ targets: ArraySlice<(ActingBackend, String)>, hungUp: [HungUpModem],
                           done: @escaping (Result<[HungUpModem], CallActFailure>) -> Void) {
        guard let (backend, path) = targets.first else { return done(.success(hungUp)) }
        let modem = HungUpModem(stack: backend.kind, path: path)
        let answer = actsInFlight.begin(on: backend.kind, gone: Result<Void, CallActFailure>.failure(.stackGone)) {
            [weak self] result in
            switch result {
            case .failure(let failure): done(.failure(failure))
            case .success:
                guard let self, self.isRunning else { return done(.failure(.stackGone)) }
                self.hangUpAll(targets.dropFirst(), hungUp: hungUp + [modem], done: done)
            }
        }
        backend.hangUpAll(modem: path, done: answer)
    }

    /// A number that may be dialled or deflected to: dial characters only, and no emergency number.
    private func dialable(_ raw: String) -> Result<DialString, CallActFailure> {
        let number: DialString
        do {
            number = try DialString(number: raw)
        } catch {
            return .failure(.refusedNumber(error))
        }
        let listed = listedEmergencyNumbers.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        return EmergencyDial.isEmergency(number, listed: listed) ? .failure(.emergencyNumber) : .success(number)
    }

    private func actingBackend(_ kind: BackendKind) -> ActingBackend? {
        backends.first { $0.kind == kind } as? ActingBackend
    }
}
