/// The clients that asked for something (a `Subscribe()`), each until it asks to stop or leaves
/// the bus, the way sd-bus's `sd_bus_track` and zbus follow a peer: its unique name's owner is
/// watched, so a client that crashed stops counting without ever saying so. Bounded: a bus full
/// of clients cannot grow this without end.
public final class ClientTracker {
    public static let defaultLimit = 64

    private let connection: Connection
    private let limit: Int
    private var watches: [String: NameOwnerWatch] = [:]
    /// Runs after every change, with the number of clients now.
    public var onChange: (Int) -> Void = { _ in }

    public init(connection: Connection, limit: Int = ClientTracker.defaultLimit) {
        self.connection = connection
        self.limit = limit
    }

    public var isEmpty: Bool { watches.isEmpty }
    public var count: Int { watches.count }
    public var clients: [String] { watches.keys.sorted() }

    /// Adds a client by its unique name; false when it was there already. Throws the bus's
    /// `LimitsExceeded` error when the tracker is full.
    @discardableResult
    public func add(_ uniqueName: String) throws -> Bool {
        guard watches[uniqueName] == nil else { return false }
        guard watches.count < limit else {
            throw DBusError.remote(name: "org.freedesktop.DBus.Error.LimitsExceeded",
                                   message: "already \(limit) subscribers")
        }
        // The watch asks the bus for the name's owner after subscribing to its changes: a client
        // that left before this ran is found gone (`absent`) instead of counted forever.
        watches[uniqueName] = try connection.watchName(uniqueName) { [weak self] event in
            switch event {
            case .appeared: break
            case .vanished, .absent: self?.remove(uniqueName)
            }
        }
        onChange(watches.count)
        return true
    }

    /// Removes a client; false when it was not there.
    @discardableResult
    public func remove(_ uniqueName: String) -> Bool {
        guard let watch = watches.removeValue(forKey: uniqueName) else { return false }
        watch.cancel()
        onChange(watches.count)
        return true
    }

    public func removeAll() {
        for watch in watches.values { watch.cancel() }
        watches.removeAll()
    }
}
