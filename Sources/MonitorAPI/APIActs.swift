import CallMonitor
import DBus
import Pipeline

/// The API's acts on calls (docs/dbus-api.md, "Acts on calls"): the options read, the caller
/// checked (`ActAuthority`), then the session acts, and the method's reply waits for the stack's
/// answer (`MethodReply`): the loop never does. The `acted` event goes out before the reply.
final class APIActs {
    private weak var session: SinkSession?
    private let authority: ActAuthority

    init(session: SinkSession?, connection: Connection) {
        self.session = session
        authority = ActAuthority(connection: connection)
    }

    /// `act` on the call whose object is at `path` (`Call1`'s methods).
    func act(_ act: CallAct, onObject path: String?, options: DBusValue, reply: MethodReply) throws {
        let callID = session?.liveCalls.first { call in (try? MonitorNames.callPath(id: call.id))?.rawValue == path }?.id
        let requester = try APIActs.requester(in: options)
        let action: ActAction = switch act {
        case .answer, .hangUp: .answerHangUp
        case .deflect, .sendTones: .dial
        }
        authority.check(action, sender: reply.sender) { [weak self] verdict in
            guard let uid = APIActs.permitted(verdict, reply) else { return }
            guard let session = self?.session else { return APIActs.fail(.stackGone, reply) }
            guard let callID else { return APIActs.fail(.noSuchCall, reply) }
            session.act(act, on: callID, by: requester, uid: uid) { report in
                guard let failure = report.failure else { return reply.send([]) }
                APIActs.fail(failure, reply)
            }
        }
    }

    /// Places a call; the reply is the new call's object, `/` when it ended before telwatch saw it.
    func dial(_ number: String, modem: String, options: DBusValue, reply: MethodReply) throws {
        let requester = try APIActs.requester(in: options)
        authority.check(.dial, sender: reply.sender) { [weak self] verdict in
            guard let uid = APIActs.permitted(verdict, reply) else { return }
            guard let session = self?.session else { return APIActs.fail(.stackGone, reply) }
            session.dial(number, modem: modem.isEmpty ? nil : modem, by: requester, uid: uid) { [weak session] report in
                switch report.outcome {
                case .failure(let failure): APIActs.fail(failure, reply)
                case .success(let key):
                    let call = session?.liveCalls.first { $0.key == key }
                    let path: ObjectPath = call.flatMap { try? MonitorNames.callPath(id: $0.id) } ?? "/"
                    reply.send([.objectPath(path)])
                }
            }
        }
    }

    /// `Silence` (screening's, at once) for a caller polkit lets answer and hang up.
    func silence(_ callID: String, reply: MethodReply, _ silence: @escaping (String) throws -> Void) {
        authority.check(.answerHangUp, sender: reply.sender) { verdict in
            guard APIActs.permitted(verdict, reply) != nil else { return }
            do {
                try silence(callID)
                reply.send([])
            } catch DBusError.remote(let name, let message) {
                reply.fail(name: name, message: message)
            } catch {
                reply.fail(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
            }
        }
    }

    /// The caller's uid when allowed; otherwise `NotPermitted` is answered, and nil.
    private static func permitted(_ verdict: ActAuthority.Verdict, _ reply: MethodReply) -> UInt32? {
        switch verdict {
        case .allowed(let uid): return uid
        case .refused(let why):
            reply.fail(name: MonitorNames.notPermittedError, message: EscapedText.escape(why))
            return nil
        }
    }

    /// The failure's error; its message in words, for `StackRefused` the stack's own error name
    /// and words, escaped (never a control character raw, whatever the stack said).
    private static func fail(_ failure: CallActFailure, _ reply: MethodReply) {
        let stackError = failure.stackError.map { $0 + ": " } ?? ""
        reply.fail(name: MonitorNames.error(of: failure), message: EscapedText.escape(stackError + failure.message))
    }

    /// The `requester` option: `api` unless the caller says `cli`; any other option or value is
    /// refused before anything is asked or done.
    static func requester(in options: DBusValue) throws -> ActRequester {
        guard let entries = options.stringKeyedDictionary else { return .api }
        var requester = ActRequester.api
        for (key, value) in entries {
            guard key == requesterOption else {
                throw DBusError.remote(name: MonitorNames.invalidArgsError,
                                       message: "no option '\(EscapedText.escape(String(key.prefix(64))))'; "
                                           + "the one option is '\(requesterOption)'")
            }
            guard let asked = value.string.flatMap(ActRequester.init(rawValue:)), asked == .api || asked == .cli else {
                throw DBusError.remote(name: MonitorNames.invalidArgsError,
                                       message: "'\(requesterOption)' is 'api' or 'cli' (a string)")
            }
            requester = asked
        }
        return requester
    }

    static let requesterOption = "requester"
}
