import CDBus
import Glibc

/// Objects below a path that are not exported one by one but made when asked for (sd-bus's
/// fallback vtable with its node enumerator): for objects that come and go often, such as one per
/// call, whose export would otherwise cost an object, its path and two dictionary entries each
/// time whether or not anyone ever looks.
public struct ObjectSubtree {
    /// The path the objects are below, e.g. `/io/telwatch/Monitor1/Call`.
    public let prefix: String
    /// The object at a full path below `prefix`, made for this request; nil for none.
    public let find: (String) -> ExportedObject?
    /// The paths of every object there now.
    public let paths: () -> [String]

    public init(prefix: ObjectPath, find: @escaping (String) -> ExportedObject?, paths: @escaping () -> [String]) {
        self.prefix = prefix.rawValue
        self.find = find
        self.paths = paths
    }
}
