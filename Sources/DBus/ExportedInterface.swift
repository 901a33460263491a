import CDBus
import Glibc

/// One interface of an exported object: its methods, properties and (for introspection) signals.
public final class ExportedInterface {
    /// Returns the reply's arguments, or throws; a thrown `DBusError.remote` becomes that error reply.
    public typealias MethodHandler = (Message) throws -> [DBusValue]
    /// Answers through `MethodReply`, now or later; a thrown `DBusError.remote` before it did
    /// becomes that error reply.
    public typealias LaterMethodHandler = (Message, MethodReply) throws -> Void

    enum Answer {
        case now(MethodHandler)
        case later(LaterMethodHandler)
    }

    public enum Access: String, Sendable { case read, write, readwrite }

    struct Method {
        let name: String
        let inSignature: String
        let outSignature: String
        let documentation: Documentation
        let answer: Answer
    }

    struct Property {
        let name: String
        let signature: String
        let access: Access
        let documentation: String?
        let get: (ExportedObject) -> DBusValue
        let set: ((DBusValue) throws -> Void)?
    }

    struct Signal {
        let name: String
        let signature: String
        let documentation: Documentation
    }

    /// What introspection says about a member beyond its types: its arguments' names (in, then
    /// out) and a doc string (`org.gtk.GDBus.DocString`, which gdbus-codegen and d-feet show).
    public struct Documentation: Sendable {
        public var arguments: [String]
        public var text: String?

        public init(arguments: [String] = [], _ text: String? = nil) {
            self.arguments = arguments
            self.text = text
        }
    }

    public let name: String
    /// The interface's doc string in its introspection.
    public var documentation: String?
    private(set) var methods: [Method] = []
    private(set) var properties: [Property] = []
    private(set) var signals: [Signal] = []

    public init(_ name: String, documentation: String? = nil) throws {
        try DBusName.check(interface: name)
        self.name = name
        self.documentation = documentation
    }

    public func addMethod(_ name: String, in inSignature: String = "", out outSignature: String = "",
                          documentation: Documentation = Documentation(), _ handler: @escaping MethodHandler) throws {
        try DBusName.check(member: name)
        _ = try Signature(inSignature)
        _ = try Signature(outSignature)
        methods.append(Method(name: name, inSignature: inSignature, outSignature: outSignature,
                              documentation: documentation, answer: .now(handler)))
    }

    /// A method whose reply waits on something else: `handler` gets the call and its
    /// `MethodReply`, keeps the reply, and answers through it once the work is done.
    public func addMethod(_ name: String, in inSignature: String = "", out outSignature: String = "",
                          documentation: Documentation = Documentation(),
                          answeredLater handler: @escaping LaterMethodHandler) throws {
        try DBusName.check(member: name)
        _ = try Signature(inSignature)
        _ = try Signature(outSignature)
        methods.append(Method(name: name, inSignature: inSignature, outSignature: outSignature,
                              documentation: documentation, answer: .later(handler)))
    }

    public func addProperty(_ name: String, signature: String, documentation: String? = nil,
                            get: @escaping () -> DBusValue, set: ((DBusValue) throws -> Void)? = nil) throws {
        try addProperty(name, signature: signature, documentation: documentation, ofObject: { _ in get() }, set: set)
    }

    /// A read-only property whose value depends on the object it is read on: one interface shared
    /// by many objects (one per call, say), each object's `context` telling them apart.
    public func addProperty(_ name: String, signature: String, documentation: String? = nil,
                            ofObject get: @escaping (ExportedObject) -> DBusValue,
                            set: ((DBusValue) throws -> Void)? = nil) throws {
        try DBusName.check(member: name)
        _ = try Signature(signature)
        properties.append(Property(name: name, signature: signature, access: set == nil ? .read : .readwrite,
                                   documentation: documentation, get: get, set: set))
    }

    public func addSignal(_ name: String, signature: String = "", documentation: Documentation = Documentation())
        throws {
        try DBusName.check(member: name)
        _ = try Signature(signature)
        signals.append(Signal(name: name, signature: signature, documentation: documentation))
    }

    func method(_ member: String) -> Method? { methods.first { $0.name == member } }
    func property(_ member: String) -> Property? { properties.first { $0.name == member } }

    /// Current values of every readable property on `object`, as `a{sv}` entries.
    public func propertyValues(of object: ExportedObject) -> [String: DBusValue] {
        var out: [String: DBusValue] = [:]
        for property in properties where property.access != .write { out[property.name] = property.get(object) }
        return out
    }
}
