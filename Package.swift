// swift-tools-version: 6.0
import PackageDescription

// Layers run one way (docs/ARCHITECTURE.md): CLoop → Loop → DBus → BGRunManager / CallMonitor →
// Pipeline → History → MQTTExport, and Pipeline → MonitorAPI, PhoneActions → telwatch. A target
// lists exactly the modules it may import.
let package = Package(
    name: "telwatch",
    products: [
        .executable(name: "telwatch", targets: ["telwatch"]),
        .library(name: "DBus", targets: ["DBus"]),
    ],
    targets: [
        .systemLibrary(name: "CLoop"),
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Its header only: libmosquitto is loaded when MQTT is first used (CMosquitto/shim.h).
        .systemLibrary(
            name: "CMosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(name: "Loop", dependencies: ["CLoop"]),
        .target(name: "DBus", dependencies: ["CDBus", "Loop"]),
        .target(name: "BGRunManager", dependencies: ["DBus", "Loop"]),
        .target(name: "CallMonitor", dependencies: ["DBus", "Loop"]),
        .target(name: "Pipeline", dependencies: ["BGRunManager", "CallMonitor", "Loop"]),
        .target(name: "History", dependencies: ["CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop"]),
        .target(name: "MonitorAPI", dependencies: ["Pipeline", "CallMonitor", "BGRunManager", "DBus", "Loop"]),
        .target(name: "PhoneActions", dependencies: ["Pipeline", "CallMonitor", "DBus", "Loop"]),
        .target(name: "MQTTExport",
                dependencies: ["CMosquitto", "History", "CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop"]),
        .executableTarget(name: "telwatch",
                          dependencies: ["MQTTExport", "History", "MonitorAPI", "PhoneActions", "Pipeline",
                                         "CallMonitor", "BGRunManager", "DBus", "Loop"]),
        .executableTarget(name: "dbus-storm-receiver", dependencies: ["DBus", "Loop"], path: "bench/dbus-storm-receiver"),
        .executableTarget(name: "history-bench", dependencies: ["History", "Pipeline", "CallMonitor", "BGRunManager", "Loop"],
                          path: "bench/history-bench"),
        .executableTarget(name: "screening-bench", dependencies: ["Pipeline", "CallMonitor", "Loop"],
                          path: "bench/screening-bench"),

        .target(name: "TestSupport", dependencies: ["CLoop", "CallMonitor", "DBus", "Loop"], path: "Tests/TestSupport"),
        .executableTarget(name: "telwatch-run-probe", dependencies: ["BGRunManager", "DBus", "Loop"], path: "Tests/RunProbe"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "Loop", "TestSupport"]),
        .testTarget(name: "CallMonitorTests", dependencies: ["CallMonitor", "Loop", "TestSupport"]),
        .testTarget(name: "BGRunManagerTests", dependencies: ["BGRunManager", "Loop", "TestSupport"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "CallMonitor", "BGRunManager", "Loop", "TestSupport"]),
        .testTarget(name: "HistoryTests",
                    dependencies: ["History", "CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop", "TestSupport"]),
        .testTarget(name: "TelwatchTests",
                    dependencies: ["telwatch", "MQTTExport", "History", "CSQLite", "PhoneActions", "Pipeline",
                                   "CallMonitor", "BGRunManager", "DBus", "Loop", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["CallMonitor", "DBus", "Loop", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
