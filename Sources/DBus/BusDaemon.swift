import CDBus
import Glibc

/// Well-known names of the bus itself.
public enum BusDaemon {
    public static let name = "org.freedesktop.DBus"
    public static let path: ObjectPath = "/org/freedesktop/DBus"
    public static let interface = "org.freedesktop.DBus"
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    public static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    public static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
}
