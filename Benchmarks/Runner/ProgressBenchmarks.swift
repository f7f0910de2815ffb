import BenchmarkHarness
import Progress
import TestSupport

/// The Progress module's cases, with the sizes from the module's issue.
enum ProgressBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [
            sequentialTicks(count: quick ? 20_000 : 1_000_000),
            scatteredIntervals(count: quick ? 5_000 : 100_000),
            union(count: quick ? 5_000 : 100_000),
            retention(viewers: quick ? 2_000 : 100_000, intervalsPerViewer: 20, buckets: 100),
        ]
    }

    /// Ordinary playback: a tick every 0.25 s, each extending the interval the last one made.
    static func sequentialTicks(count: Int) -> Benchmark {
        let duration = Double(count) * 0.25
        let ticks = (0..<count).map { Double($0) * 0.25..<Double($0 + 1) * 0.25 }
        return Benchmark(
            group: "Progress",
            name: "\(count.formatted) sequential 0.25 s ticks, then the fraction",
            items: count,
            target: .atLeast(30),
            setup: {
                {
                    var set = IntervalSet()
                    for tick in ticks { set.insert(tick) }
                    blackHole(set.coveredLength / duration)
                }
            },
            baselineName: RangeSetBaseline.name,
            baseline: {
                { blackHole(RangeSetBaseline.coveredLength(afterInserting: ticks) / duration) }
            }
        )
    }

    /// A fragmented history: many disjoint short intervals arriving in random order.
    static func scatteredIntervals(count: Int) -> Benchmark {
        var generator = SplitMix64(seed: 2_024)
        var intervals = (0..<count).map { Double($0 * 10)..<Double($0 * 10 + 3) }
        intervals.shuffle(using: &generator)
        let input = intervals
        return Benchmark(
            group: "Progress",
            name: "\(count.formatted) scattered intervals, random order",
            items: count,
            target: .within(2),
            setup: {
                {
                    var set = IntervalSet()
                    for interval in input { set.insert(interval) }
                    blackHole(set.coveredLength)
                }
            },
            baselineName: "offline sort + merge",
            baseline: {
                { blackHole(sortAndMerge(input)) }
            }
        )
    }

    /// Merging two devices' fragmented histories.
    static func union(count: Int) -> Benchmark {
        var generator = SplitMix64(seed: 7)
        func randomIntervals() -> [Range<Double>] {
            (0..<count).map { index in
                let start = Double(index * 10) + Double.random(in: 0..<5, using: &generator)
                return start..<start + Double.random(in: 1..<6, using: &generator)
            }
        }
        let left = randomIntervals()
        let right = randomIntervals()
        let leftSet = IntervalSet(left)
        let rightSet = IntervalSet(right)
        return Benchmark(
            group: "Progress",
            name: "union of two \(count.formatted)-interval sets",
            items: 2 * count,
            target: .atLeast(1),
            setup: {
                { blackHole(leftSet.union(rightSet).count) }
            },
            baselineName: RangeSetBaseline.unionName,
            baseline: RangeSetBaseline.unionSetup(left, right)
        )
    }

    /// The audience view of a popular lesson.
    static func retention(viewers: Int, intervalsPerViewer: Int, buckets: Int) -> Benchmark {
        var generator = SplitMix64(seed: 11)
        let duration = 3_600.0
        let sets = (0..<viewers).map { _ in
            IntervalSet(
                (0..<intervalsPerViewer).map { _ in
                    let start = Double.random(in: 0..<duration, using: &generator)
                    return start..<Swift.min(duration, start + Double.random(in: 5..<120, using: &generator))
                })
        }
        let total = sets.reduce(0) { $0 + $1.count }
        return Benchmark(
            group: "Progress",
            name: "retention curve, \(viewers.formatted) viewers × \(intervalsPerViewer) intervals",
            items: total,
            setup: {
                { blackHole(RetentionCurve(viewers: sets, duration: duration, bucketCount: buckets).viewers) }
            },
            baselineName: "per-bucket coverage query",
            baseline: {
                {
                    let width = duration / Double(buckets)
                    var counts = [Int](repeating: 0, count: buckets)
                    for bucket in 0..<buckets {
                        let range = Double(bucket) * width..<Double(bucket + 1) * width
                        for set in sets where set.coveredLength(in: range) > 0 { counts[bucket] += 1 }
                    }
                    blackHole(counts)
                }
            }
        )
    }

    /// The textbook offline approach: sort by start, then merge in one pass.
    static func sortAndMerge(_ intervals: [Range<Double>]) -> Double {
        let sorted = intervals.sorted { $0.lowerBound < $1.lowerBound }
        var total = 0.0
        var current: Range<Double>?
        for interval in sorted {
            if let open = current, interval.lowerBound <= open.upperBound {
                current = open.lowerBound..<Swift.max(open.upperBound, interval.upperBound)
            } else {
                if let open = current { total += open.upperBound - open.lowerBound }
                current = interval
            }
        }
        if let open = current { total += open.upperBound - open.lowerBound }
        return total
    }
}

/// The standard library's `RangeSet`, which needs macOS 15 / iOS 18 on Apple platforms; older
/// systems fall back to a sorted array, and the table names which baseline ran.
enum RangeSetBaseline {
    static var name: String {
        if #available(macOS 15, iOS 18, *) { return "RangeSet<Double>" }
        return "sorted array"
    }

    static var unionName: String {
        if #available(macOS 15, iOS 18, *) { return "RangeSet.formUnion" }
        return "sort + merge"
    }

    static func coveredLength(afterInserting intervals: [Range<Double>]) -> Double {
        if #available(macOS 15, iOS 18, *) {
            var set = RangeSet<Double>()
            for interval in intervals { set.insert(contentsOf: interval) }
            return set.ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
        }
        return ProgressBenchmarks.sortAndMerge(intervals)
    }

    static func unionSetup(_ left: [Range<Double>], _ right: [Range<Double>]) -> Benchmark.Setup {
        if #available(macOS 15, iOS 18, *) {
            let leftSet = RangeSet(left)
            let rightSet = RangeSet(right)
            return {
                {
                    var union = leftSet
                    union.formUnion(rightSet)
                    blackHole(union.ranges.count)
                }
            }
        }
        return { { blackHole(ProgressBenchmarks.sortAndMerge(left + right)) } }
    }
}

extension Int {
    /// The number with thousands separators: `1,000,000`.
    var formatted: String {
        let digits = String(self)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index).isMultiple(of: 3) { result.append(",") }
            result.append(digit)
        }
        return result
    }
}
