/// A small, fast, seeded random number generator for reproducible tests and benchmarks.
///
/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014) passes BigCrush and needs only one 64-bit word of state, so a failing property
/// test can print its seed and be replayed exactly.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    /// The generator's current state; the next output is derived from it.
    public private(set) var state: UInt64

    /// Creates a generator that produces the sequence determined by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// Returns the next 64 random bits.
    ///
    /// - Complexity: O(1).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
