/// `org.freedesktop.DBus.ObjectManager` at a root object (ModemManager's pattern): the objects
/// below it are listed by `GetManagedObjects` and announced by `InterfacesAdded` and
/// `InterfacesRemoved`. The owner decides whether the signals go out (`sendsSignals`): an API
/// that signals only while a client subscribed still answers `GetManagedObjects` at any time.
public final class ObjectManager {
    public let connection: Connection
    public let root: ExportedObject
    /// Whether adding and removing objects is announced.
    public var sendsSignals = true
    /// The managed objects, by path.
    private var managed: [ObjectPath: ExportedObject] = [:]

    /// Exports `root` with the ObjectManager interface added to it.
    public init(connection: Connection, root: ExportedObject) throws {
        self.connection = connection
        self.root = root
        let manager = try ExportedInterface(BusDaemon.objectManagerInterface)
        try manager.addMethod("GetManagedObjects", out: "a{oa{sa{sv}}}",
                              documentation: .init(arguments: ["objects"])) { [unowned self] _ in
            [.dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", self.objects.map {
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

    /// The managed objects, by path.
    public var objects: [ExportedObject] { managed.values.sorted { $0.path.rawValue < $1.path.rawValue } }

    /// Exports `object` and announces it with its properties.
    public func add(_ object: ExportedObject) throws {
        managed[object.path] = object
        connection.export(object)
        guard sendsSignals else { return }
        let message = try Message.signal(path: root.path, interface: BusDaemon.objectManagerInterface,
                                         member: "InterfacesAdded")
        try message.append(values: [.objectPath(object.path), ObjectManager.interfaceMap(object)])
        try connection.send(message)
    }

    /// Stops exporting the object at `path` and announces that it went.
    public func remove(_ path: ObjectPath) throws {
        guard let object = managed.removeValue(forKey: path) else { return }
        connection.unexport(path)
        guard sendsSignals else { return }
        let message = try Message.signal(path: root.path, interface: BusDaemon.objectManagerInterface,
                                         member: "InterfacesRemoved")
        try message.append(object.path, object.interfaces.map(\.name))
        try connection.send(message)
    }

    /// Stops exporting everything, root included.
    public func close() {
        for path in managed.keys { connection.unexport(path) }
        managed.removeAll()
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
