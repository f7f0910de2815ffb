extension IntervalSet: Codable {
    /// Encodes the set as an array of `[start, end]` pairs in increasing order.
    ///
    /// - Complexity: O(*n*).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for interval in self {
            try container.encode([interval.lowerBound, interval.upperBound])
        }
    }

    /// Decodes an array of `[start, end]` pairs, merging any that overlap.
    ///
    /// - Throws: `DecodingError.dataCorrupted` naming the pair when one is not two finite
    ///   numbers with the start before the end.
    /// - Complexity: O(*m* log *m*) for *m* pairs.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var intervals: [Range<Double>] = []
        if let count = container.count { intervals.reserveCapacity(count) }
        while !container.isAtEnd {
            let index = container.currentIndex
            let pair = try container.decode([Double].self)
            guard pair.count == 2, pair[0].isFinite, pair[1].isFinite, pair[0] < pair[1] else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "Interval \(index) is \(pair): expected [start, end] with finite start < end"
                )
            }
            intervals.append(pair[0]..<pair[1])
        }
        self.init(intervals)
    }
}
