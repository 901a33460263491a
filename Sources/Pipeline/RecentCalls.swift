import CallMonitor
import Contacts

/// The calls screening remembers for its exceptions, indexed by the number's last digits so that a
/// ring costs one lookup however many calls are remembered (the contact book's matching rule
/// decides within a bucket). Bounded: past `limit` the oldest call is forgotten.
struct RecentCalls {
    private struct Entry {
        var digits: (count: Int, last9: UInt64)
        var direction: CallDirection
        var time: Double
    }

    private let limit: Int
    /// Oldest first within a bucket.
    private var buckets: [UInt64: [Entry]] = [:]
    /// Each entry's bucket, oldest first: what to forget next.
    private var order: [UInt64] = []
    private var forgotten = 0

    init(limit: Int) { self.limit = limit }

    var count: Int { order.count - forgotten }

    /// Numbers that can match share their last 7 digits (their whole digits when shorter: a short
    /// number matches only itself).
    private static func bucket(_ digits: (count: Int, last9: UInt64)) -> UInt64 {
        let shortest = UInt64(ContactBook.shortestSuffix)
        return digits.count < ContactBook.shortestSuffix
            ? UInt64(digits.count) << 40 | digits.last9 : shortest << 40 | digits.last9 % 10_000_000
    }

    mutating func add(_ number: String, direction: CallDirection, time: Double) {
        let digits = ContactBook.digits(of: number.utf8)
        guard digits.count > 0 else { return }
        let key = RecentCalls.bucket(digits)
        buckets[key, default: []].append(Entry(digits: digits, direction: direction, time: time))
        order.append(key)
        if count > limit { forgetOldest() }
    }

    private mutating func forgetOldest() {
        let key = order[forgotten]
        forgotten += 1
        buckets[key]?.removeFirst()
        if buckets[key]?.isEmpty == true { buckets[key] = nil }
        // The forgotten keys are dropped in one go once they are half the array.
        if forgotten > limit { order.removeFirst(forgotten); forgotten = 0 }
    }

    /// When `number` last called before `time`, and when this phone last called it.
    func latest(_ number: String, before time: Double) -> (incoming: Double?, outgoing: Double?) {
        let digits = ContactBook.digits(of: number.utf8)
        guard digits.count > 0, let entries = buckets[RecentCalls.bucket(digits)] else { return (nil, nil) }
        var incoming: Double?
        var outgoing: Double?
        for entry in entries.reversed() where ContactBook.sameNumber(entry.digits, digits) {
            if entry.direction == .incoming, entry.time < time, incoming == nil {
                incoming = entry.time
            } else if entry.direction == .outgoing, outgoing == nil {
                outgoing = entry.time
            }
            if incoming != nil && outgoing != nil { break }
        }
        return (incoming, outgoing)
    }
}
