import Progress
import TestSupport
import Testing

@Suite("Audience view")
struct AudienceTests {
    @Test("retention counts each viewer once per bucket and integrates the average exactly")
    func smallCurve() {
        let viewers: [IntervalSet] = [[0..<10], [0..<5, 6..<7], [5..<10]]
        let curve = RetentionCurve(viewers: viewers, duration: 10, bucketCount: 2)
        #expect(curve.viewers == [2, 3])
        // Bucket [5, 10): 5 + 1 + 5 viewer-seconds over 5 seconds.
        #expect(curve.averageViewers == [2, 2.2])
        #expect(curve.retention == [2.0 / 3, 1])
        #expect(curve.viewerCount == 3)
    }

    @Test("retention matches a brute-force count on random audiences")
    func bruteForce() {
        for seed in UInt64(0)..<200 {
            var generator = SplitMix64(seed: seed)
            let duration = 100.0
            let buckets = Int.random(in: 1...30, using: &generator)
            let viewers = (0..<Int.random(in: 0..<30, using: &generator)).map { _ in
                generator.intervalSet(count: Int.random(in: 0..<6, using: &generator), span: 220)
            }
            let curve = RetentionCurve(viewers: viewers, duration: duration, bucketCount: buckets)
            let width = duration / Double(buckets)
            for bucket in 0..<buckets {
                let range = Double(bucket) * width..<(bucket == buckets - 1 ? duration : Double(bucket + 1) * width)
                let reached = viewers.filter { $0.coveredLength(in: range) > 0 }.count
                let average = viewers.reduce(0) { $0 + $1.coveredLength(in: range) } / width
                #expect(curve.viewers[bucket] == reached, "seed \(seed) bucket \(bucket)")
                #expect(abs(curve.averageViewers[bucket] - average) < 1e-9, "seed \(seed) bucket \(bucket)")
            }
        }
    }

    @Test("an unusable duration gives an empty curve", arguments: [0, -5, Double.nan, .infinity])
    func badDuration(duration: Double) {
        let curve = RetentionCurve(viewers: [[0..<10]], duration: duration, bucketCount: 4)
        #expect(curve.viewers.isEmpty && curve.averageViewers.isEmpty)
    }

    /// Found while fuzzing: a bucket index computed as `Int(time / width)` trapped on intervals
    /// far beyond a tiny duration.
    @Test("intervals far beyond the duration land in the last bucket instead of trapping")
    func farIntervals() {
        let curve = RetentionCurve(viewers: [[0..<1e300]], duration: 1e-300, bucketCount: 4)
        #expect(curve.viewers == [1, 1, 1, 1])
    }

    @Test("play counts count repeated coverage, not the union")
    func playCounts() {
        let counts = PlayCounts(played: [0..<10, 0..<10, 0..<10, 5..<20, 30..<40])
        #expect(
            counts.spans == [
                .init(range: 0..<5, playCount: 3), .init(range: 5..<10, playCount: 4),
                .init(range: 10..<20, playCount: 1), .init(range: 30..<40, playCount: 1),
            ])
        #expect(counts.playCount(at: 7) == 4)
        #expect(counts.playCount(at: 25) == 0)
        #expect(counts.mostRewatched(limit: 1) == [.init(range: 5..<10, playCount: 4)])
        #expect(PlayCounts(played: [0..<5, 5..<10]).spans == [.init(range: 0..<10, playCount: 1)])
    }
}
