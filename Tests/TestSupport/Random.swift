/// A small deterministic generator (SplitMix64): a test that draws from it fails the same way
/// every time, so a failing mix can be replayed from its seed.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Deterministic call ids, "id-1", "id-2", …, so expectations can name calls in order of creation.
public final class SequentialIDs {
    private var count = 0

    public init() {}

    public func next() -> String {
        count += 1
        return "id-\(count)"
    }
}
