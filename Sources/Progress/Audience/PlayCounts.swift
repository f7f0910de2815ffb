/// How many times each part of a lesson was played by one viewer: the spans they re-watched.
///
/// Built from the spans a viewer played, overlaps kept (``WatchTracker/playedSpans``), it
/// counts coverage rather than taking the union: playing `[0, 10)` three times gives one
/// span `[0, 10)` played 3 times.
///
/// - Complexity: Building sorts the span endpoints: O(*m* log *m*) for *m* spans.
public struct PlayCounts: Sendable, Hashable {
    /// A stretch of media played the same number of times.
    public struct Span: Sendable, Hashable {
        /// The media time, in seconds.
        public var range: Range<Double>
        /// How many times it was played.
        public var playCount: Int

        /// Creates a span.
        public init(range: Range<Double>, playCount: Int) {
            self.range = range
            self.playCount = playCount
        }
    }

    /// The stretches played at least once, in media order; neighbours have different counts.
    public let spans: [Span]

    /// Counts how many times each point of the media was played.
    ///
    /// - Parameter played: Played spans in any order, overlaps allowed; empty or non-finite
    ///   spans are ignored.
    public init(played: some Sequence<Range<Double>>) {
        var endpoints: [(time: Double, delta: Int)] = []
        for span in played where span.lowerBound.isFinite && span.upperBound.isFinite && !span.isEmpty {
            endpoints.append((span.lowerBound, 1))
            endpoints.append((span.upperBound, -1))
        }
        endpoints.sort { $0.time < $1.time }
        var spans: [Span] = []
        var count = 0
        var index = 0
        while index < endpoints.count {
            let time = endpoints[index].time
            // Apply every endpoint at this time before emitting, so touching spans join.
            while index < endpoints.count, endpoints[index].time == time {
                count += endpoints[index].delta
                index += 1
            }
            guard index < endpoints.count else { break }
            let next = endpoints[index].time
            guard count > 0 else { continue }
            if let last = spans.last, last.playCount == count, last.range.upperBound == time {
                spans[spans.count - 1].range = last.range.lowerBound..<next
            } else {
                spans.append(Span(range: time..<next, playCount: count))
            }
        }
        self.spans = spans
    }

    /// The spans played at least `minimumPlayCount` times, most played first (then longest,
    /// then earliest), at most `limit` of them.
    ///
    /// - Complexity: O(*s* log *s*) for *s* spans.
    public func mostRewatched(minimumPlayCount: Int = 2, limit: Int = 5) -> [Span] {
        let candidates = spans.filter { $0.playCount >= minimumPlayCount }
        let ordered = candidates.sorted { lhs, rhs in
            if lhs.playCount != rhs.playCount { return lhs.playCount > rhs.playCount }
            let lhsLength = lhs.range.upperBound - lhs.range.lowerBound
            let rhsLength = rhs.range.upperBound - rhs.range.lowerBound
            if lhsLength != rhsLength { return lhsLength > rhsLength }
            return lhs.range.lowerBound < rhs.range.lowerBound
        }
        return Array(ordered.prefix(Swift.max(limit, 0)))
    }

    /// How many times the point `time` was played.
    ///
    /// - Complexity: O(log *s*).
    public func playCount(at time: Double) -> Int {
        var low = 0
        var high = spans.count
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].range.upperBound <= time { low = middle + 1 } else { high = middle }
        }
        guard low < spans.count, spans[low].range.contains(time) else { return 0 }
        return spans[low].playCount
    }
}
