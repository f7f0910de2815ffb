extension IntervalSet {
    /// Whether `time` lies inside one of the intervals (start included, end excluded).
    ///
    /// - Complexity: O(log *n*).
    public func contains(_ time: Double) -> Bool {
        guard time.isFinite else { return false }
        let position = firstPosition { $0 > time }
        guard position.chunk < chunks.count else { return false }
        return chunks[position.chunk].bounds[position.index].start <= time
    }

    /// The length of the part of `range` that the set covers.
    ///
    /// - Complexity: O(log *n* + *k*) for the *k* intervals that overlap `range`.
    public func coveredLength(in range: Range<Double>) -> Double {
        guard !range.isEmpty, !range.lowerBound.isNaN, !range.upperBound.isNaN else { return 0 }
        var total = CompensatedSum()
        forEachInterval(overlapping: range) { start, end in
            total.add(Swift.min(end, range.upperBound) - Swift.max(start, range.lowerBound))
        }
        return total.value
    }

    /// The parts of `range` that the set does not cover, in order: what is left to watch.
    ///
    /// - Complexity: O(log *n* + *k*) for the *k* intervals that overlap `range`.
    public func gaps(in range: Range<Double>) -> [Range<Double>] {
        guard Self.isStorable(range) else { return [] }
        var gaps: [Range<Double>] = []
        var cursor = range.lowerBound
        forEachInterval(overlapping: range) { start, end in
            if start > cursor { gaps.append(cursor..<start) }
            cursor = Swift.max(cursor, end)
        }
        if cursor < range.upperBound { gaps.append(cursor..<range.upperBound) }
        return gaps
    }

    /// Calls `body` with the bounds of each interval that overlaps `range`, in order.
    func forEachInterval(overlapping range: Range<Double>, _ body: (Double, Double) -> Void) {
        let lower = range.lowerBound
        let upper = range.upperBound
        var position = firstPosition { $0 > lower }
        while position.chunk < chunks.count {
            let chunk = chunks[position.chunk]
            for index in position.index..<chunk.bounds.count {
                guard chunk.bounds[index].start < upper else { return }
                body(chunk.bounds[index].start, chunk.bounds[index].end)
            }
            position = Position(chunk: position.chunk + 1, index: 0)
        }
    }

    /// The union of this set and `other`.
    ///
    /// - Complexity: O(*n* + *m*): one merge pass over both sorted sets.
    public func union(_ other: IntervalSet) -> IntervalSet {
        var result = IntervalSet()
        var mine = makeIterator()
        var theirs = other.makeIterator()
        var nextMine = mine.next()
        var nextTheirs = theirs.next()
        while true {
            let interval: Range<Double>
            switch (nextMine, nextTheirs) {
            case (let left?, let right?):
                if left.lowerBound <= right.lowerBound {
                    interval = left
                    nextMine = mine.next()
                } else {
                    interval = right
                    nextTheirs = theirs.next()
                }
            case (let left?, nil):
                interval = left
                nextMine = mine.next()
            case (nil, let right?):
                interval = right
                nextTheirs = theirs.next()
            case (nil, nil):
                return result
            }
            // Sorted input always lands on the append-or-extend fast path.
            result.insert(interval)
        }
    }

    /// Adds every interval of `other` to this set.
    ///
    /// - Complexity: O(*m* log *n*) when `other` is much smaller than this set (each of its *m*
    ///   intervals is inserted), otherwise O(*n* + *m*) by a merge pass.
    public mutating func formUnion(_ other: IntervalSet) {
        let logarithm = Int.bitWidth - count.leadingZeroBitCount  // ⌈log₂ n⌉
        if other.count * Swift.max(logarithm, 1) < count + other.count {
            for interval in other { insert(interval) }
        } else {
            self = union(other)
        }
    }

    /// The parts covered by both this set and `other`.
    ///
    /// - Complexity: O(*n* + *m*).
    public func intersection(_ other: IntervalSet) -> IntervalSet {
        var result = IntervalSet()
        var mine = makeIterator()
        var theirs = other.makeIterator()
        var left = mine.next()
        var right = theirs.next()
        while let a = left, let b = right {
            let lower = Swift.max(a.lowerBound, b.lowerBound)
            let upper = Swift.min(a.upperBound, b.upperBound)
            if lower < upper { result.insert(lower..<upper) }
            if a.upperBound <= b.upperBound {
                left = mine.next()
            } else {
                right = theirs.next()
            }
        }
        return result
    }

    /// The parts of this set inside `range`.
    ///
    /// - Complexity: O(log *n* + *k*) for the *k* intervals that overlap `range`.
    public func clipped(to range: Range<Double>) -> IntervalSet {
        var result = IntervalSet()
        guard Self.isStorable(range) || (range.lowerBound.isFinite && range.upperBound == .infinity) else {
            return result
        }
        forEachInterval(overlapping: range) { start, end in
            result.insert(Swift.max(start, range.lowerBound)..<Swift.min(end, range.upperBound))
        }
        return result
    }

    /// This set with every gap shorter than `tolerance` filled.
    ///
    /// Filling short gaps is a closure operator: applying it twice changes nothing, and closing a
    /// union gives the same result as closing the parts first, so progress merged from several
    /// devices does not depend on the order of the merges.
    ///
    /// - Complexity: O(*n*).
    public func closingGaps(shorterThan tolerance: Double) -> IntervalSet {
        guard tolerance.isFinite, tolerance > 0 else { return self }
        var result = IntervalSet()
        for interval in self {
            result.insert(interval, mergingGapsShorterThan: tolerance)
        }
        return result
    }
}
