import BGRunManager
import Contacts
import MQTTExport
import MonitorAPI
import Pipeline
import Processes

/// A part of the watch session that takes a reloaded configuration (SIGHUP) itself: what it can
/// change while running, it changes; the rest waits for the next start (`WatchOptions`'
/// `settingsNeedingARestart` says which). `schema` is the event schema the new options make, one
/// for every sink that writes events.
protocol ReloadsOptions: AnyObject {
    func reload(_ options: WatchOptions, schema: EventSchema)
}

extension WatchOptions {
    /// The event schema of these options, with the session's contact book.
    func schema(contacts: ContactDirectory?) -> EventSchema {
        EventSchema(redactNumbers: redactNumbers, contacts: contacts)
    }
}

extension WarningSink: ReloadsOptions {
    func reload(_ options: WatchOptions, schema: EventSchema) { verbosity = options.verbosity }
}

extension OutputSink: ReloadsOptions {
    func reload(_ options: WatchOptions, schema: EventSchema) {
        verbosity = options.verbosity
        self.schema = schema
    }
}

extension HookRunner: ReloadsOptions {
    func reload(_ options: WatchOptions, schema: EventSchema) {
        settings.directory = options.hooksDirectory
        settings.commands = options.hookCommands
        settings.timeout = options.hookTimeout
    }
}

extension ScopedCommandSink: ReloadsOptions {
    func reload(_ options: WatchOptions, schema: EventSchema) { settings.commands = options.whileCommands }
}

extension WatchScreening: ReloadsOptions {
    func reload(_ options: WatchOptions, schema: EventSchema) {
        verbose = options.verbosity == .verbose
        follow(options.screeningFile)
    }
}

extension MonitorAPI: ReloadsOptions {
    func reload(_ options: WatchOptions, schema: EventSchema) { self.schema = schema }
}

extension MQTTSink: ReloadsOptions {
    func reload(_ options: WatchOptions, schema: EventSchema) { self.schema = schema }
}
