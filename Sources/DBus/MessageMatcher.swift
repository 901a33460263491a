import CDBus
import Glibc

/// A match rule prepared for routing every delivered message: header fields are compared as
/// C strings against libdbus's own, with no Swift string built per message.
/// A well-known `sender` cannot be resolved here and is left to the bus (and to `Subscription`'s
/// owner check); a unique name is compared.
final class MessageMatcher {
    private let type: Int32?
    private let sender: [CChar]?
    private let path: [CChar]?
    private let interface: [CChar]?
    private let member: [CChar]?
    private let destination: [CChar]?
    private let pathNamespace: String?
    private let arguments: [Int: String]
    /// The usual case, `arg0` alone (a PropertiesChanged's interface, a PropertyChanged's name):
    /// compared in place, since a message may be checked against several such rules.
    private let firstArgument: [CChar]?

    init(_ rule: MatchRule) {
        switch rule.type {
        case .signal: type = CDBUS_MESSAGE_TYPE_SIGNAL
        case .methodCall: type = CDBUS_MESSAGE_TYPE_METHOD_CALL
        case .methodReturn: type = CDBUS_MESSAGE_TYPE_METHOD_RETURN
        case .error: type = CDBUS_MESSAGE_TYPE_ERROR
        case nil: type = nil
        }
        func bytes(_ value: String?) -> [CChar]? { value.map { Array($0.utf8CString) } }
        let uniqueSender = rule.sender.flatMap { $0.hasPrefix(":") || $0 == BusDaemon.name ? $0 : nil }
        sender = bytes(uniqueSender)
        path = bytes(rule.path)
        interface = bytes(rule.interface)
        member = bytes(rule.member)
        destination = bytes(rule.destination)
        pathNamespace = rule.pathNamespace
        arguments = rule.arguments
        firstArgument = rule.arguments.count == 1 ? bytes(rule.arguments[0]) : nil
    }

    private static func equal(_ expected: [CChar]?, _ actual: UnsafePointer<CChar>?) -> Bool {
        guard let expected else { return true }
        guard let actual else { return false }
        return expected.withUnsafeBufferPointer { strcmp($0.baseAddress!, actual) == 0 }
    }

    func matches(_ message: Message) -> Bool { matches(message, MessageHeader(message)) }

    /// `header` is `message`'s, looked up once for every rule a delivered message is checked against.
    func matches(_ message: Message, _ header: MessageHeader) -> Bool {
        let raw = message.raw
        if let type, header.type != type { return false }
        guard MessageMatcher.equal(interface, header.interface),
              MessageMatcher.equal(member, header.member),
              MessageMatcher.equal(path, header.path),
              MessageMatcher.equal(sender, header.sender),
              MessageMatcher.equal(destination, header.destination)
        else { return false }
        if let pathNamespace {
            guard let actual = message.path else { return false }
            let prefix = pathNamespace == "/" ? "/" : pathNamespace + "/"
            if actual != pathNamespace && !actual.hasPrefix(prefix) { return false }
        }
        if let firstArgument {
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(raw, &iter) != 0,
                  dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_STRING else { return false }
            var value = DBusBasicValue()
            dbus_message_iter_get_basic(&iter, &value)
            return MessageMatcher.equal(firstArgument, value.str)
        }
        if !arguments.isEmpty {
            var reader = message.reader()
            var index = 0
            let last = arguments.keys.max() ?? 0
            var strings: [Int: String] = [:]
            while index <= last && !reader.isAtEnd {
                if let value = try? reader.readValue(), let string = value.string { strings[index] = string }
                index += 1
            }
            for (index, expected) in arguments where strings[index] != expected { return false }
        }
        return true
    }
}

/// A message's header fields as libdbus keeps them (C strings inside the message, valid while it
/// lives), looked up once per message rather than once per match rule: every signal is checked
/// against each of the connection's rules.
struct MessageHeader {
    let type: Int32
    let interface: UnsafePointer<CChar>?
    let member: UnsafePointer<CChar>?
    let path: UnsafePointer<CChar>?
    let sender: UnsafePointer<CChar>?
    let destination: UnsafePointer<CChar>?

    init(_ message: Message) {
        let raw = message.raw
        type = dbus_message_get_type(raw)
        interface = dbus_message_get_interface(raw)
        member = dbus_message_get_member(raw)
        path = dbus_message_get_path(raw)
        sender = dbus_message_get_sender(raw)
        destination = dbus_message_get_destination(raw)
    }
}
