import DBus

/// `(oa{sv})`: an object and its properties, as oFono's GetModems and GetCalls list them.
public struct PathProperties: DBusType {
    public var path: ObjectPath
    public var properties: PropertyMap

    public static var dbusSignature: String { "(oa{sv})" }

    public init(from reader: inout MessageReader) throws {
        (path, properties) = try reader.readStruct(signature: Self.dbusSignature) { inner in
            (try inner.read(ObjectPath.self), try inner.read(PropertyMap.self))
        }
    }

    public init?(dbusValue: DBusValue) {
        guard case .structure(let fields) = dbusValue, fields.count == 2,
              let path = ObjectPath(dbusValue: fields[0]), let properties = PropertyMap(dbusValue: fields[1])
        else { return nil }
        self.path = path
        self.properties = properties
    }

    public var dbusValue: DBusValue { .structure([.objectPath(path), properties.dbusValue]) }
}
