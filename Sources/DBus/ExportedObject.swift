import CDBus
import Glibc

/// An object this connection answers for at one path.
public final class ExportedObject {
    public let path: ObjectPath
    public private(set) var interfaces: [ExportedInterface]
    /// What the object stands for, for interfaces shared by many objects (`addProperty(ofObject:)`).
    public let context: AnyObject?

    public init(path: ObjectPath, interfaces: [ExportedInterface], context: AnyObject? = nil) {
        self.path = path
        self.interfaces = interfaces
        self.context = context
    }

    /// Adds an interface after those already there (an object manager adds its own).
    public func add(_ interface: ExportedInterface) {
        interfaces.append(interface)
    }

    public func interface(_ name: String) -> ExportedInterface? { interfaces.first { $0.name == name } }
}

extension Connection {
    /// Starts answering for the objects of `subtree`.
    public func export(subtree: ObjectSubtree) {
        exportedSubtrees[subtree.prefix] = subtree
    }

    public func unexport(subtree prefix: ObjectPath) {
        exportedSubtrees.removeValue(forKey: prefix.rawValue)
    }

    /// The object at `path`: exported, or found in a subtree.
    func exportedObject(at path: String) -> ExportedObject? {
        if let object = exportedObjects[path] { return object }
        for subtree in exportedSubtrees.values where path.hasPrefix(subtree.prefix + "/") {
            if let object = subtree.find(path) { return object }
        }
        return nil
    }

    /// Starts answering method calls on `object.path`, including `Properties` and `Introspect`.
    public func export(_ object: ExportedObject) {
        exportedObjects[object.path.rawValue] = object
    }

    public func unexport(_ path: ObjectPath) {
        exportedObjects.removeValue(forKey: path.rawValue)
    }

    /// Current property values of one exported interface (empty if nothing is exported there).
    public func exportedProperties(path: ObjectPath, interface: String) -> [String: DBusValue] {
        guard let object = exportedObject(at: path.rawValue) else { return [:] }
        return object.interface(interface)?.propertyValues(of: object) ?? [:]
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for an exported interface.
    public func emitPropertiesChanged(path: ObjectPath, interface: String, changed: [String: DBusValue],
                                      invalidated: [String] = []) throws {
        let message = try Message.signal(path: path, interface: BusDaemon.propertiesInterface,
                                         member: "PropertiesChanged")
        try message.append(interface, Connection.propertyMap(changed), invalidated)
        try send(message)
    }

    static func propertyMap(_ values: [String: DBusValue]) -> [String: Variant] {
        values.mapValues { Variant($0) }
    }

    /// Answers a method call addressed to an exported object. Returns false when nothing here
    /// knows the path, so libdbus sends its own UnknownMethod error.
    func handleMethodCall(_ call: Message) -> Bool {
        guard let path = call.path, let member = call.member else { return false }
        let interface = call.interface
        guard let object = exportedObject(at: path) else {
            if interface == BusDaemon.introspectableInterface || interface == nil, member == "Introspect",
               !childNodes(of: path).isEmpty {
                reply(to: call, [.string(introspection(path: path, object: nil))])
                return true
            }
            replyError(to: call, name: "org.freedesktop.DBus.Error.UnknownObject", "no object at \(path)")
            return true
        }
        do {
            switch (interface, member) {
            case (BusDaemon.introspectableInterface, "Introspect"), (nil, "Introspect"):
                reply(to: call, [.string(introspection(path: path, object: object))])
            case (BusDaemon.propertiesInterface, "Get"):
                let (name, property) = try call.decode(String.self, String.self)
                let found = try findProperty(object, name, property)
                reply(to: call, [.variant(found.get(object))])
            case (BusDaemon.propertiesInterface, "GetAll"):
                let name = try call.decode(String.self)
                guard let target = object.interface(name) else {
                    throw DBusError.remote(name: "org.freedesktop.DBus.Error.UnknownInterface",
                                           message: "no interface \(name) at \(path)")
                }
                reply(to: call, [Connection.propertyMap(target.propertyValues(of: object)).dbusValue])
            case (BusDaemon.propertiesInterface, "Set"):
                let (name, property, value) = try call.decode(String.self, String.self, Variant.self)
                let found = try findProperty(object, name, property)
                guard let setter = found.set else {
                    throw DBusError.remote(name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                                           message: "\(property) is read-only")
                }
                guard value.value.signatureString == found.signature else {
                    throw DBusError.remote(name: "org.freedesktop.DBus.Error.InvalidArgs",
                                           message: "\(property) takes '\(found.signature)'")
                }
                try setter(value.value)
                reply(to: call, [])
            default:
                let candidates = interface.map { object.interface($0).map { [$0] } ?? [] } ?? object.interfaces
                guard let method = candidates.lazy.compactMap({ $0.method(member) }).first else {
                    throw DBusError.remote(name: "org.freedesktop.DBus.Error.UnknownMethod",
                                           message: "no method \(member) on \(interface ?? "any interface") at \(path)")
                }
                guard call.hasSignature(method.inSignature) else {
                    throw DBusError.remote(name: "org.freedesktop.DBus.Error.InvalidArgs",
                                           message: "\(member) takes '\(method.inSignature)', got '\(call.signature)'")
                }
                let handler: ExportedInterface.MethodHandler
                switch method.answer {
                case .now(let now): handler = now
                case .later(let later):
                    let reply = MethodReply(call: call, connection: self, outSignature: method.outSignature)
                    do { try later(call, reply) } catch {
                        // Answered already: the caller has its answer, and this error is the handler's alone.
                        guard reply.answer() else { return true }
                        throw error
                    }
                    return true
                }
                let values = try handler(call)
                let produced = values.map(\.signatureString).joined()
                guard produced == method.outSignature else {
                    throw DBusError.remote(name: "org.freedesktop.DBus.Error.Failed",
                                           message: "\(member) produced '\(produced)', declared '\(method.outSignature)'")
                }
                reply(to: call, values)
            }
        } catch let error as DBusError {
            switch error {
            case .remote(let name, let message): replyError(to: call, name: name, message)
            case .signatureMismatch, .typeMismatch:
                replyError(to: call, name: "org.freedesktop.DBus.Error.InvalidArgs", error.description)
            default: replyError(to: call, name: "org.freedesktop.DBus.Error.Failed", error.description)
            }
        } catch {
            replyError(to: call, name: "org.freedesktop.DBus.Error.Failed", "\(error)")
        }
        return true
    }

    private func findProperty(_ object: ExportedObject, _ interface: String, _ name: String) throws
        -> ExportedInterface.Property
    {
        guard let target = object.interface(interface) else {
            throw DBusError.remote(name: "org.freedesktop.DBus.Error.UnknownInterface",
                                   message: "no interface \(interface) at \(object.path)")
        }
        guard let property = target.property(name) else {
            throw DBusError.remote(name: "org.freedesktop.DBus.Error.UnknownProperty",
                                   message: "no property \(name) on \(interface)")
        }
        return property
    }

    func reply(to call: Message, _ values: [DBusValue]) {
        guard !call.noReply else { return }
        let reply = call.makeReply()
        do {
            try reply.append(values: values)
            try send(reply)
        } catch {
            replyError(to: call, name: "org.freedesktop.DBus.Error.Failed", "\(error)")
        }
    }

    func replyError(to call: Message, name: String, _ text: String) {
        guard !call.noReply else { return }
        do { try send(call.makeErrorReply(name: name, message: text)) } catch let error as DBusError where error == .disconnected {
            // The caller went with the connection, whose loss `onDisconnect` reports.
        } catch {
            onWarning("the error reply \(name) to \(call.member ?? "a call") was not sent: \(error)")
        }
    }

    /// Names of the exported paths directly below `path`.
    private func childNodes(of path: String) -> [String] {
        let prefix = path == "/" ? "/" : path + "/"
        var children = Set<String>()
        let subtreePaths = exportedSubtrees.values.flatMap { $0.paths() }
        for exported in exportedObjects.keys + subtreePaths where exported.hasPrefix(prefix) && exported != path {
            if let first = exported.dropFirst(prefix.count).split(separator: "/").first { children.insert(String(first)) }
        }
        return children.sorted()
    }

    private func introspection(path: String, object: ExportedObject?) -> String {
        var xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>

        """
        if let object {
            xml += """
             <interface name="org.freedesktop.DBus.Introspectable">
              <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
             </interface>
             <interface name="org.freedesktop.DBus.Properties">
              <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
              <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
              <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
              <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed" type="a{sv}"/><arg name="invalidated" type="as"/></signal>
             </interface>

            """
            for interface in object.interfaces { xml += Connection.introspection(of: interface) }
        }
        for child in childNodes(of: path) { xml += " <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    /// One interface's element. A member with documentation takes one line per part (its doc
    /// string, then its arguments); one without keeps to a line.
    static func introspection(of interface: ExportedInterface) -> String {
        var xml = " <interface name=\"\(interface.name)\">\n"
        if let text = interface.documentation { xml += "  " + docAnnotation(text) + "\n" }
        func element(_ kind: String, _ name: String, _ documentation: ExportedInterface.Documentation,
                     _ arguments: [(type: String, direction: String?)]) -> String {
            var names = documentation.arguments.makeIterator()
            let parts = arguments.map { argument in
                "<arg" + (names.next().map { " name=\"\(xmlAttribute($0))\"" } ?? "") + " type=\"\(argument.type)\""
                    + (argument.direction.map { " direction=\"\($0)\"" } ?? "") + "/>"
            }
            guard let text = documentation.text else {
                return "  <\(kind) name=\"\(name)\">" + parts.joined() + "</\(kind)>\n"
            }
            return "  <\(kind) name=\"\(name)\">\n   " + docAnnotation(text) + "\n"
                + parts.map { "   " + $0 + "\n" }.joined() + "  </\(kind)>\n"
        }
        for method in interface.methods {
            xml += element("method", method.name, method.documentation,
                           splitSignature(method.inSignature).map { ($0, "in") }
                               + splitSignature(method.outSignature).map { ($0, "out") })
        }
        for signal in interface.signals {
            xml += element("signal", signal.name, signal.documentation, splitSignature(signal.signature).map { ($0, nil) })
        }
        for property in interface.properties {
            let head = "  <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"\(property.access.rawValue)\""
            if let text = property.documentation {
                xml += head + ">\n   " + docAnnotation(text) + "\n  </property>\n"
            } else {
                xml += head + "/>\n"
            }
        }
        return xml + " </interface>\n"
    }

    private static func docAnnotation(_ text: String) -> String {
        "<annotation name=\"org.gtk.GDBus.DocString\" value=\"\(xmlAttribute(text))\"/>"
    }

    /// Text as an XML attribute value: the markup characters and line breaks escaped.
    static func xmlAttribute(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n": out += "&#10;"
            default: out.append(character)
            }
        }
        return out
    }

    /// Splits a signature into its complete types ("sa{sv}as" → ["s", "a{sv}", "as"]).
    static func splitSignature(_ signature: String) -> [String] {
        var types: [String] = []
        var current = ""
        var depth = 0
        for character in signature {
            current.append(character)
            switch character {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            case "a": continue
            default: break
            }
            if depth == 0 && character != "a" {
                types.append(current)
                current = ""
            }
        }
        return types
    }
}
