/// How many viewers watched each part of a lesson: the audience-retention chart of a course.
///
/// The media `[0, duration)` is cut into equal buckets. For each bucket the curve gives
/// ``viewers``, the number of viewers who watched any of it, and ``averageViewers``, the number
/// watching at an average instant of it (the exact integral of the viewer count over the
/// bucket, divided by its length), which is what a retention chart plots.
///
/// - Complexity: Building the curve sorts every interval endpoint once:
///   O(*E* log *E* + *N*) for *E* intervals over all viewers and *N* buckets.
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
    ///   - viewers: One interval set per viewer.
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
            Swift.min(Swift.max(Int(time / width), 0), buckets - 1)
        }

        // Endpoints for the sweep: +1 where a viewer's interval starts, -1 where it ends.
        var endpoints: [(time: Double, delta: Int)] = []
        // Per-bucket "touched by this viewer" counts through a difference array.
        var touched = [Int](repeating: 0, count: buckets + 1)
        var count = 0
        for set in sets {
            count += 1
            var lastMarkedBucket = -1
            for interval in set {
                let start = Swift.max(interval.lowerBound, 0)
                let end = Swift.min(interval.upperBound, duration)
                guard start < end else { continue }
                endpoints.append((start, 1))
                endpoints.append((end, -1))
                // The buckets [first, last] hold some of [start, end); a viewer counts once each.
                let first = Swift.max(bucket(of: start), lastMarkedBucket + 1)
                let last = bucket(of: end.nextDown)
                if first <= last {
                    touched[first] += 1
                    touched[last + 1] -= 1
                    lastMarkedBucket = last
                }
            }
        }
        viewerCount = count
        var running = 0
        viewers = touched.prefix(buckets).map { change in
            running += change
            return running
        }

        endpoints.sort { $0.time < $1.time }
        var integral = [Double](repeating: 0, count: buckets)
        var watching = 0
        var cursor = 0.0
        for endpoint in endpoints {
            Self.accumulate(watching, from: cursor, to: endpoint.time, width: width, into: &integral)
            cursor = endpoint.time
            watching += endpoint.delta
        }
        averageViewers = integral.map { $0 / width }
    }

    /// Adds `watching × length` for `[from, to)` to the buckets it spans.
    private static func accumulate(
        _ watching: Int, from: Double, to: Double, width: Double, into integral: inout [Double]
    ) {
        guard watching > 0, from < to else { return }
        let last = integral.count - 1
        var start = from
        var index = Swift.min(Int(start / width), last)
        while start < to, index <= last {
            let bucketEnd = index == last ? to : Swift.min(Double(index + 1) * width, to)
            integral[index] += Double(watching) * (bucketEnd - start)
            start = bucketEnd
            index += 1
        }
    }

    /// The share of viewers who watched some of each bucket, 0…1.
    public var retention: [Double] {
        guard viewerCount > 0 else { return viewers.map { _ in 0 } }
        return viewers.map { Double($0) / Double(viewerCount) }
    }
}
