import CallMonitor
import DBus

/// `--call-audio`: switches the audio to call mode through callaudiod
/// (`org.mobian_project.CallAudio`, docs/phone-actions.md) when the first call connects, and back
/// when the last live call has ended. Held, swapped and waiting calls change nothing in
/// between: the mode follows two edges only, so it never flaps.
final class CallAudioAction {
    private let service: SessionService
    /// A call has connected since the calls began (the mode callaudiod should be in).
    private var inCall = false
    /// The mode last asked of the current owner; nil when nothing was asked of it yet.
    private var asked: CallAudioMode?
    /// A switch is out: one at a time, so calls that come and go faster than callaudiod answers
    /// cannot pile up switches; its answer sends the mode wanted by then, if that differs.
    private var switching = false

    init(service: SessionService) {
        self.service = service
        // A callaudiod that starts (or starts again) mid-call is put in call mode.
        service.onAppeared = { [weak self] in self?.update() }
        service.onVanished = { [weak self] in self?.asked = nil }  // its pending switch fails and is let go
    }

    func receive(_ event: TrackerEvent) {
        switch event {
        case .transition(let call, _) where call.state == .connected:
            inCall = true
            update()
        case .idle:
            inCall = false
            update()
        default:
            break
        }
    }

    private func update() {
        let want: CallAudioMode = inCall ? .call : .default
        // Nothing was switched yet: the default mode needs no asking.
        guard service.isPresent, !switching, asked != want, asked != nil || want == .call else { return }
        asked = want
        switching = true
        service.call("SelectMode", [.uint32(want.rawValue)]) { [weak self] result in
            self?.switching = false
            self?.answered(want, result)
            self?.update()
        }
    }

    private func answered(_ mode: CallAudioMode, _ result: Result<Message, DBusError>) {
        let what = mode == .call ? "switch the audio to call mode" : "switch the audio back from call mode"
        switch result {
        case .success(let reply):
            guard let switched = try? reply.decode(Bool.self) else {
                return service.failed("callaudiod answered SelectMode(\(mode.rawValue)) with '\(reply.signature)', "
                                      + "not whether it could \(what)")
            }
            guard switched else {
                return service.failed("callaudiod could not \(what) (SelectMode(\(mode.rawValue)) answered false)")
            }
            service.worked()
        case .failure(.timedOut):
            service.failed("callaudiod did not \(what) within \(Int(SessionService.callTimeout)) s "
                           + "(is its sound server running?)")
        case .failure(.disconnected):
            break
        case .failure(let error):
            service.failed("callaudiod refused to \(what): \(error)")
        }
    }
}
