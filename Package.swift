// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "telwatch",
    products: [
        .executable(name: "telwatch", targets: ["telwatch"]),
        .library(name: "DBus", targets: ["DBus"]),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .target(name: "DBus", dependencies: ["CDBus"]),
        .target(name: "BGRunManager", dependencies: ["DBus"]),
        .target(name: "CallMonitor", dependencies: ["BGRunManager", "DBus"]),
        .executableTarget(name: "telwatch", dependencies: ["CallMonitor", "BGRunManager", "DBus"]),
        .executableTarget(name: "dbus-storm-receiver", dependencies: ["DBus"], path: "bench/dbus-storm-receiver"),

        .target(name: "TestSupport", dependencies: ["CDBus", "DBus"], path: "Tests/TestSupport"),
        .executableTarget(name: "telwatch-run-probe", dependencies: ["BGRunManager", "DBus"], path: "Tests/RunProbe"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestSupport"]),
        .testTarget(name: "CallMonitorTests", dependencies: ["CallMonitor", "TestSupport"]),
        .testTarget(name: "BGRunManagerTests", dependencies: ["BGRunManager", "TestSupport"]),
        .testTarget(name: "TelwatchTests", dependencies: ["telwatch", "DBus", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["DBus", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
