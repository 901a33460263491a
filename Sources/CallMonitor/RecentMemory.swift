/// A map from call keys to small values that keeps at most `limit` most recently inserted
/// entries. Insert, remove and lookup are amortised O(1).
struct RecentMemory<Value> {
    private var entries: [CallKey: (stamp: UInt64, value: Value)] = [:]
    private var order: [(key: CallKey, stamp: UInt64)] = []
    private var head = 0
    private var nextStamp: UInt64 = 0
    let limit: Int

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    var count: Int { entries.count }

    // An empty memory (no call announced, pending or ended: most of a storm) answers without
    // hashing the key: a dictionary hashes it even when it holds nothing.
    func contains(_ key: CallKey) -> Bool { !entries.isEmpty && entries[key] != nil }

    /// Returns the entries that fell out of the memory to make room.
    @discardableResult
    mutating func insert(_ key: CallKey, _ value: Value) -> [(key: CallKey, value: Value)] {
        guard limit > 0 else { return [(key, value)] }
        let stamp = nextStamp
        nextStamp &+= 1
        entries[key] = (stamp, value)
        order.append((key, stamp))
        var evicted: [(key: CallKey, value: Value)] = []
        while entries.count > limit, head < order.count {
            let oldest = order[head]
            head += 1
            if entries[oldest.key]?.stamp == oldest.stamp, let gone = entries.removeValue(forKey: oldest.key) {
                evicted.append((oldest.key, gone.value))
            }
        }
        compactIfNeeded()
        return evicted
    }

    /// The entries that match, removed.
    @discardableResult
    mutating func removeAll(where match: (CallKey, Value) -> Bool) -> [(key: CallKey, value: Value)] {
        let matching = entries.filter { match($0.key, $0.value.value) }.map { ($0.key, $0.value.value) }
        for (key, _) in matching { entries.removeValue(forKey: key) }
        compactIfNeeded()
        return matching
    }

    @discardableResult
    mutating func remove(_ key: CallKey) -> Value? {
        let removed = entries.isEmpty ? nil : entries.removeValue(forKey: key)?.value
        if entries.isEmpty {
            order.removeAll(keepingCapacity: order.count <= 2 * limit + 16)
            head = 0
        }
        return removed
    }

    /// Drops stale order entries (removed or replaced keys) once they dominate.
    private mutating func compactIfNeeded() {
        guard order.count - head > 2 * limit + 16 || head > limit + 16 else { return }
        order = order[head...].filter { entries[$0.key]?.stamp == $0.stamp }
        head = 0
    }
}
