/// Summary figures of a set of timing samples, in seconds per iteration.
public struct Statistics: Equatable, Sendable, Codable {
    /// The middle sample (the mean of the two middle samples for an even count).
    public var median: Double
    /// The fastest sample: the least disturbed by the rest of the machine.
    public var minimum: Double
    /// The 90th percentile by the nearest-rank method: nine samples in ten were at least this fast.
    public var p90: Double
    /// The number of samples summarised.
    public var count: Int

    /// Summarises `samples`, or returns `nil` when there are none or one is not finite.
    ///
    /// - Complexity: O(*n* log *n*) for *n* samples.
    public init?(samples: [Double]) {
        guard !samples.isEmpty, samples.allSatisfy(\.isFinite) else { return nil }
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        median = sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
        minimum = sorted[0]
        // Nearest rank: the smallest sample with at least 90% of the samples at or below it.
        let rank = Int((0.9 * Double(sorted.count)).rounded(.up))
        p90 = sorted[max(rank, 1) - 1]
        count = sorted.count
    }
}
