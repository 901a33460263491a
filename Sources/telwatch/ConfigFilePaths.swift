/// A path in a config file names a file beside it, not one in whatever directory the command
/// happens to run from (the service runs from `/`): the relative value of a file or directory
/// setting (`screening`, `contacts`, `hooks`, the MQTT files) is taken from the config file's
/// directory. `state-dir` must be absolute, as on the command line.
enum ConfigFilePaths {
    /// The keys whose relative value is taken from the config file's directory.
    static let keys: Set<String> = Set(OptionTable.settings.compactMap { spec in
        guard let key = spec.key, key != "state-dir", spec.kind == .file || spec.kind == .directory else { return nil }
        return key
    })

    /// The entry's value as `WatchOptions.set` takes it.
    static func value(of entry: ConfigFile.Entry, in configFile: String) -> String {
        guard keys.contains(entry.key), !entry.value.isEmpty, !entry.value.hasPrefix("/"),
              let slash = configFile.lastIndex(of: "/") else { return entry.value }
        return String(configFile[...slash]) + entry.value
    }
}
