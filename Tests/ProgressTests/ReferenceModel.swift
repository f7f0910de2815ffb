import Progress
import TestSupport

/// The obviously-correct model of an interval set: collect everything, sort, merge touching.
struct ReferenceIntervals: Equatable {
    private(set) var raw: [Range<Double>] = []

    mutating func insert(_ interval: Range<Double>) {
        guard interval.lowerBound.isFinite, interval.upperBound.isFinite, !interval.isEmpty else { return }
        raw.append(interval)
    }

    var merged: [Range<Double>] {
        var result: [Range<Double>] = []
        for interval in raw.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, interval.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, interval.upperBound)
            } else {
                result.append(interval)
            }
        }
        return result
    }

    var coveredLength: Double { merged.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) } }
}

extension SplitMix64 {
    /// A random interval on a coarse grid (so touching and overlapping are frequent) in `0..<span`.
    mutating func gridInterval(span: Int = 200, maximumLength: Int = 12) -> Range<Double> {
        let start = Int.random(in: 0..<span, using: &self)
        let length = Int.random(in: 0...maximumLength, using: &self)
        return Double(start) / 2..<Double(start + length) / 2
    }

    /// A random interval set built from `count` grid intervals.
    mutating func intervalSet(count: Int, span: Int = 200) -> IntervalSet {
        var set = IntervalSet()
        for _ in 0..<count { set.insert(gridInterval(span: span)) }
        return set
    }
}
