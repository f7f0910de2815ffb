extension IntervalSet: Sequence {
    /// Iterates over the intervals in increasing order.
    public struct Iterator: IteratorProtocol, Sendable {
        @usableFromInline let chunks: [Chunk]
        @usableFromInline var chunk = 0
        @usableFromInline var index = 0

        @inlinable
        init(chunks: [Chunk]) {
            self.chunks = chunks
        }

        /// The next interval, or `nil` after the last.
        @inlinable
        public mutating func next() -> Range<Double>? {
            while chunk < chunks.count {
                if index < chunks[chunk].bounds.count {
                    defer { index += 1 }
                    return chunks[chunk].bounds[index].start..<chunks[chunk].bounds[index].end
                }
                chunk += 1
                index = 0
            }
            return nil
        }
    }

    /// Returns an iterator over the intervals in increasing order.
    @inlinable
    public func makeIterator() -> Iterator {
        Iterator(chunks: chunks)
    }

    /// The number of intervals, for `Array(set)` and friends to reserve capacity.
    @inlinable
    public var underestimatedCount: Int { storedCount }
}

extension IntervalSet: Equatable {
    /// Whether two sets hold the same intervals, whatever their internal layout.
    ///
    /// - Complexity: O(*n*).
    public static func == (lhs: IntervalSet, rhs: IntervalSet) -> Bool {
        lhs.storedCount == rhs.storedCount && lhs.elementsEqual(rhs)
    }
}

extension IntervalSet: Hashable {
    /// Hashes the intervals, so equal sets hash equally whatever their internal layout.
    ///
    /// - Complexity: O(*n*).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storedCount)
        for interval in self {
            hasher.combine(interval.lowerBound)
            hasher.combine(interval.upperBound)
        }
    }
}

extension IntervalSet: ExpressibleByArrayLiteral {
    /// Creates a set covering the union of the listed intervals.
    public init(arrayLiteral elements: Range<Double>...) {
        self.init(elements)
    }
}

extension IntervalSet: CustomStringConvertible {
    /// The intervals as `[0.0..<10.0, 20.0..<30.0]`.
    public var description: String {
        "[" + map { "\($0.lowerBound)..<\($0.upperBound)" }.joined(separator: ", ") + "]"
    }
}
