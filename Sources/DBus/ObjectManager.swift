/// `org.freedesktop.DBus.ObjectManager` at a root object (ModemManager's pattern): the objects
/// below it are listed by `GetManagedObjects` (from `objects`, asked when a client asks) and
/// announced by `InterfacesAdded` and `InterfacesRemoved`, which the owner sends as its objects
/// come and go (an API that signals only while a client subscribed sends nothing otherwise).
public final class ObjectManager {
    public let connection: Connection
    public let root: ExportedObject
    /// The managed objects now.
    private let objects: () -> [ExportedObject]

    /// Exports `root` with the ObjectManager interface added to it.
    public init(connection: Connection, root: ExportedObject, objects: @escaping () -> [ExportedObject]) throws {
        self.connection = connection
        self.root = root
        self.objects = objects
        let manager = try ExportedInterface(BusDaemon.objectManagerInterface)
        try manager.addMethod("GetManagedObjects", out: "a{oa{sa{sv}}}",
                              documentation: .init(arguments: ["objects"])) { [unowned self] _ in
            [.dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", self.objects().map {
                DBusValue.DictEntry(.objectPath($0.path), ObjectManager.interfaceMap($0))
            })]
        }
        try manager.addSignal("InterfacesAdded", signature: "oa{sa{sv}}",
                              documentation: .init(arguments: ["object", "interfaces"]))
        try manager.addSignal("InterfacesRemoved", signature: "oas",
                              documentation: .init(arguments: ["object", "interfaces"]))
        root.add(manager)
        connection.export(root)
    }

    /// Announces an object that came, with its properties.
    public func announceAdded(_ object: ExportedObject) throws {
        let message = try Message.signal(path: root.path, interface: BusDaemon.objectManagerInterface,
                                         member: "InterfacesAdded")
        try message.append(values: [.objectPath(object.path), ObjectManager.interfaceMap(object)])
        try connection.send(message)
    }

    /// Announces that the object at `path`, with these interfaces, went.
    public func announceRemoved(_ path: ObjectPath, interfaces: [String]) throws {
        let message = try Message.signal(path: root.path, interface: BusDaemon.objectManagerInterface,
                                         member: "InterfacesRemoved")
        try message.append(path, interfaces)
        try connection.send(message)
    }

    /// Stops exporting the root.
    public func close() {
        connection.unexport(root.path)
    }

    /// `a{sa{sv}}`: each interface with its properties, in the object's order (keys sorted).
    static func interfaceMap(_ object: ExportedObject) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "a{sv}", object.interfaces.map { interface in
            let values = interface.propertyValues(of: object).sorted { $0.key < $1.key }
            return DBusValue.DictEntry(.string(interface.name), .dictionary(
                keySignature: "s", valueSignature: "v", values.map { .init(.string($0.key), .variant($0.value)) }))
        })
    }
}
