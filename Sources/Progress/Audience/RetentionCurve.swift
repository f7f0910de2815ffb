/// How many viewers watched each part of a lesson: the audience-retention chart of a course.
///
/// The media `[0, duration)` is cut into equal buckets. For each bucket the curve gives
/// ``viewers``, the number of viewers who watched any of it, and ``averageViewers``, the number
/// watching at an average instant of it (the exact integral of the viewer count over the
/// bucket, divided by its length), which is what a retention chart plots.
///
/// - Complexity: O(*E* + *N*) for *E* intervals over all viewers and *N* buckets. Each interval
///   adds its partial first and last buckets directly and marks the whole buckets between them
///   in difference arrays, and one prefix-sum sweep over the buckets finishes both figures, so
///   no endpoint needs sorting.
public struct RetentionCurve: Sendable, Hashable {
    /// The media duration the buckets divide, in seconds.
    public let duration: Double
    /// For each bucket, the number of viewers who watched some of it.
    public let viewers: [Int]
    /// For each bucket, the average number of viewers watching at an instant in it.
    public let averageViewers: [Double]
    /// The number of viewers the curve was built from.
    public let viewerCount: Int

    /// Builds the curve from each viewer's watched intervals.
    ///
    /// Parts of intervals outside `[0, duration)` are ignored.
    ///
    /// - Parameters:
    ///   - sets: One interval set per viewer.
    ///   - duration: The media duration in seconds; a non-finite or non-positive duration gives
    ///     an empty curve.
    ///   - bucketCount: How many equal buckets to cut the media into; at least 1.
    public init(viewers sets: some Sequence<IntervalSet>, duration: Double, bucketCount: Int) {
        let buckets = Swift.max(bucketCount, 1)
        guard duration.isFinite, duration > 0 else {
            self.duration = 0
            viewers = []
            averageViewers = []
            viewerCount = 0
            return
        }
        self.duration = duration
        let width = duration / Double(buckets)
        func bucket(of time: Double) -> Int {
            // Clamp as a Double: a time far beyond the duration must not trap in `Int.init`.
            let position = time / width
            guard position > 0 else { return 0 }
            return Int(Swift.min(position, Double(buckets - 1)))
        }

        // Difference arrays: viewers touching each bucket (a viewer counts once per bucket),
        // and whole buckets covered; partial buckets add their exact seconds to `integral`.
        var touched = [Int](repeating: 0, count: buckets + 1)
        var wholeBuckets = [Int](repeating: 0, count: buckets + 1)
        var integral = [Double](repeating: 0, count: buckets)
        var count = 0
        for set in sets {
            count += 1
            var lastMarkedBucket = -1
            for interval in set {
                let start = Swift.max(interval.lowerBound, 0)
                let end = Swift.min(interval.upperBound, duration)
                guard start < end else { continue }
                let first = bucket(of: start)
                let last = bucket(of: end.nextDown)
                if first == last {
                    integral[first] += end - start
                } else {
                    integral[first] += Double(first + 1) * width - start
                    integral[last] += end - Double(last) * width
                    if first + 1 < last {
                        wholeBuckets[first + 1] += 1
                        wholeBuckets[last] -= 1
                    }
                }
                let firstUnmarked = Swift.max(first, lastMarkedBucket + 1)
                if firstUnmarked <= last {
                    touched[firstUnmarked] += 1
                    touched[last + 1] -= 1
                    lastMarkedBucket = last
                }
            }
        }
        viewerCount = count
        var viewers = [Int](repeating: 0, count: buckets)
        var averages = [Double](repeating: 0, count: buckets)
        var touching = 0
        var covering = 0
        for index in 0..<buckets {
            touching += touched[index]
            covering += wholeBuckets[index]
            viewers[index] = touching
            let bucketWidth = index == buckets - 1 ? duration - Double(index) * width : width
            averages[index] = (integral[index] + Double(covering) * bucketWidth) / width
        }
        self.viewers = viewers
        averageViewers = averages
    }

    /// The share of viewers who watched some of each bucket, 0…1.
    public var retention: [Double] {
        guard viewerCount > 0 else { return viewers.map { _ in 0 } }
        return viewers.map { Double($0) / Double(viewerCount) }
    }
}
