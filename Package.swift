// swift-tools-version: 6.0
import PackageDescription

// Layers run one way (docs/ARCHITECTURE.md): CLoop → Loop → DBus → BGRunManager / CallMonitor →
// Pipeline → History, MQTTExport, MonitorAPI, PhoneActions → telwatch, with the leaf modules
// Processes, Contacts and SQLite beside them and Simulator for `demo`. A target lists exactly the
// modules it may import (ArchitectureDocTests checks it against the doc's table).
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
        .target(name: "Processes", dependencies: ["Loop"]),
        .target(name: "Contacts", dependencies: ["Loop"]),
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        .target(name: "BGRunManager", dependencies: ["Processes", "DBus", "Loop"]),
        .target(name: "CallMonitor", dependencies: ["DBus", "Loop"]),
        .target(name: "Pipeline", dependencies: ["Contacts", "Processes", "BGRunManager", "CallMonitor", "Loop"]),
        .target(name: "History", dependencies: ["SQLite", "CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop"]),
        .target(name: "MonitorAPI", dependencies: ["Pipeline", "CallMonitor", "BGRunManager", "DBus", "Loop"]),
        .target(name: "PhoneActions", dependencies: ["Contacts", "Pipeline", "CallMonitor", "DBus", "Loop"]),
        .target(name: "MQTTExport",
                dependencies: ["CMosquitto", "SQLite", "CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop"]),
        .target(name: "Simulator", dependencies: ["CallMonitor", "DBus", "Loop"]),
        .executableTarget(name: "telwatch",
                          dependencies: ["Simulator", "MQTTExport", "History", "MonitorAPI", "PhoneActions", "Pipeline",
                                         "Contacts", "Processes", "CallMonitor", "BGRunManager", "DBus", "Loop"]),
        .executableTarget(name: "dbus-storm-receiver", dependencies: ["DBus", "Loop"], path: "bench/dbus-storm-receiver"),
        .executableTarget(name: "history-bench", dependencies: ["History", "Pipeline", "CallMonitor", "BGRunManager", "Loop"],
                          path: "bench/history-bench"),
        .executableTarget(name: "act-delay-probe", dependencies: ["CallMonitor", "DBus", "Loop"], path: "bench/act-delay-probe"),
        .executableTarget(name: "screening-bench", dependencies: ["Pipeline", "Contacts", "CallMonitor", "Loop"],
                          path: "bench/screening-bench"),

        .target(name: "TestSupport", dependencies: ["CLoop", "CallMonitor", "DBus", "Loop"], path: "Tests/TestSupport"),
        .executableTarget(name: "telwatch-run-probe", dependencies: ["BGRunManager", "DBus", "Loop"], path: "Tests/RunProbe"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "Loop", "TestSupport"]),
        .testTarget(name: "CallMonitorTests", dependencies: ["CallMonitor", "Loop", "TestSupport"]),
        .testTarget(name: "BGRunManagerTests", dependencies: ["BGRunManager", "Processes", "Loop", "TestSupport"]),
        .testTarget(name: "PipelineTests",
                    dependencies: ["Pipeline", "Contacts", "Processes", "CallMonitor", "BGRunManager", "Loop", "TestSupport"]),
        .testTarget(name: "HistoryTests",
                    dependencies: ["History", "SQLite", "CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop", "TestSupport"]),
        .testTarget(name: "TelwatchTests",
                    dependencies: ["telwatch", "Simulator", "MQTTExport", "History", "SQLite", "CSQLite", "PhoneActions",
                                   "Pipeline", "Contacts", "Processes", "CallMonitor", "BGRunManager", "DBus", "Loop",
                                   "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["CallMonitor", "DBus", "Loop", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
