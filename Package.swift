// swift-tools-version: 6.0
import PackageDescription

// Layers run one way (docs/ARCHITECTURE.md): CLoop → Loop → DBus → BGRunManager / CallMonitor →
// Pipeline → History, MQTTExport, MonitorAPI, PhoneActions → telwatch, with the leaf modules
// Processes, Contacts and SQLite beside them and Simulator for `demo`. A target lists exactly the
// modules it may import (ArchitectureDocTests checks it against the doc's table).

// Release builds lay telwatch's code out for memory (docs/packaging.md, "Code layout"): each
// function in a section of its own, so that lld can put the ones a start and a call run together
// (link/telwatch.order, written by scripts/link-order) instead of spread over the whole binary,
// where the kernel maps every 64 KiB stretch a run touches; packed relative relocations
// (DT_RELR, glibc 2.36) instead of 0.6 MB of them read at every start; and no dynamic symbol
// table of telwatch's own functions, which nothing looks up. DBus and Loop, the DBus library
// product, keep plain flags: a package that depends on a product may not have unsafe flags.
let sectioned: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))]
let layout = Context.packageDirectory + "/link/"
// The linker script's INSERT makes the lld of Swift 6.0 (Debian 13's swiftlang 6.0.3) fail an
// assertion; that toolchain links without it (15 KiB of unnamed functions left where they are).
#if compiler(>=6.1)
let unnamedCode = ["-Xlinker", "--script=" + layout + "text.ld"]
#else
let unnamedCode: [String] = []
#endif
let releaseLink: [LinkerSetting] = [.unsafeFlags([
    "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--symbol-ordering-file=" + layout + "telwatch.order", "-Xlinker", "--no-warn-symbol-ordering",
    "-Xlinker", "--no-export-dynamic",
] + unnamedCode, .when(configuration: .release))]

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
        .target(name: "Processes", dependencies: ["Loop"], swiftSettings: sectioned),
        .target(name: "Contacts", dependencies: ["Loop"], swiftSettings: sectioned),
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: sectioned),
        .target(name: "BGRunManager", dependencies: ["Processes", "DBus", "Loop"], swiftSettings: sectioned),
        .target(name: "CallMonitor", dependencies: ["DBus", "Loop"], swiftSettings: sectioned),
        .target(name: "Pipeline", dependencies: ["Contacts", "Processes", "BGRunManager", "CallMonitor", "Loop"],
                swiftSettings: sectioned),
        .target(name: "History", dependencies: ["SQLite", "CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop"],
                swiftSettings: sectioned),
        .target(name: "MonitorAPI", dependencies: ["Pipeline", "CallMonitor", "BGRunManager", "DBus", "Loop"],
                swiftSettings: sectioned),
        .target(name: "PhoneActions", dependencies: ["Contacts", "Pipeline", "CallMonitor", "DBus", "Loop"],
                swiftSettings: sectioned),
        .target(name: "MQTTExport",
                dependencies: ["CMosquitto", "SQLite", "CSQLite", "Pipeline", "CallMonitor", "BGRunManager", "Loop"],
                swiftSettings: sectioned),
        .target(name: "Simulator", dependencies: ["CallMonitor", "DBus", "Loop"], swiftSettings: sectioned),
        .executableTarget(name: "telwatch",
                          dependencies: ["Simulator", "MQTTExport", "History", "MonitorAPI", "PhoneActions", "Pipeline",
                                         "Contacts", "Processes", "CallMonitor", "BGRunManager", "DBus", "Loop"],
                          swiftSettings: sectioned, linkerSettings: releaseLink),
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
