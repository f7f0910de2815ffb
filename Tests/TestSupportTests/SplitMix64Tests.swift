import TestSupport
import Testing

@Suite("SplitMix64")
struct SplitMix64Tests {
    /// Reference outputs of Vigna's C implementation (prng.di.unimi.it/splitmix64.c).
    @Test(
        "matches the reference implementation",
        arguments: [
            (0, [16_294_208_416_658_607_535, 7_960_286_522_194_355_700, 487_617_019_471_545_679]),
            (1_234_567, [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423]),
        ] as [(UInt64, [UInt64])]
    )
    func referenceSequence(seed: UInt64, expected: [UInt64]) {
        var generator = SplitMix64(seed: seed)
        let outputs = (0..<expected.count).map { _ in generator.next() }
        #expect(outputs == expected)
    }

    @Test("the same seed replays the same sequence; another seed does not")
    func replay() {
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        var other = SplitMix64(seed: 43)
        let a = (0..<100).map { _ in first.next() }
        let b = (0..<100).map { _ in second.next() }
        let c = (0..<100).map { _ in other.next() }
        #expect(a == b)
        #expect(a != c)
    }

    @Test("drives the standard library's random APIs within their bounds")
    func standardLibraryUse() {
        var generator = SplitMix64(seed: 7)
        var buckets = [Int](repeating: 0, count: 10)
        for _ in 0..<10_000 {
            let value = Int.random(in: 0..<10, using: &generator)
            buckets[value] += 1
        }
        // 1,000 expected per bucket; ±200 is more than 6 standard deviations.
        #expect(buckets.allSatisfy { (800...1_200).contains($0) }, "\(buckets)")
        let unit = Double.random(in: 0..<1, using: &generator)
        #expect((0..<1).contains(unit))
    }
}
